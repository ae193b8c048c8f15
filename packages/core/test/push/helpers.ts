import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { connect, type Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { Connector, ConnectTarget, Resolver } from '../../src/push/webhook.js';

/**
 * A self-signed certificate for `hooks.test` only (no IP address in it), valid until 2126, made
 * for these tests with:
 *   openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 36500 \
 *     -keyout hooks-test.key -out hooks-test.crt -subj "/CN=hooks.test" \
 *     -addext "subjectAltName=DNS:hooks.test"
 */
export const TLS_CERT = readFileSync(new URL('./fixtures/hooks-test.crt', import.meta.url), 'utf8');
export const TLS_KEY = readFileSync(new URL('./fixtures/hooks-test.key', import.meta.url), 'utf8');

export interface Received {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
  /** The TLS server name the client sent (SNI), for https servers. */
  readonly servername: string | false | null | undefined;
}

export interface Receiver {
  readonly port: number;
  readonly received: Received[];
  close(): Promise<void>;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** A webhook receiver on 127.0.0.1 (the only address these tests send anything to). */
export async function startReceiver(handler: Handler, tls = false): Promise<Receiver> {
  const received: Received[] = [];
  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        servername: (req.socket as TLSSocket).servername,
      });
      handler(req, res);
    });
  };
  const server: Server = tls ? createHttpsServer({ cert: TLS_CERT, key: TLS_KEY }, listener) : createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    port: address.port,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A resolver that answers from a table, and counts its calls. */
export function tableResolver(table: Record<string, readonly string[]>): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const resolver = async (hostname: string) => {
    calls.push(hostname);
    const answers = table[hostname];
    if (answers === undefined) {
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    }
    return answers.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(resolver, { calls });
}

/** A resolver that fails the test if it is called. */
export const noResolver: Resolver = async (hostname) => {
  throw new Error(`the resolver must not be called, was called for ${hostname}`);
};

/**
 * A connector that records every target it is asked to dial and, instead of dialling it, connects
 * to `port` on 127.0.0.1, or fails as `fail` says. No traffic leaves the loopback interface.
 */
export function loopbackConnector(
  port: number,
  fail: (target: ConnectTarget) => Error | undefined = () => undefined,
): Connector & { dialled: ConnectTarget[] } {
  const dialled: ConnectTarget[] = [];
  const connector = (target: ConnectTarget): Promise<Socket> => {
    dialled.push(target);
    const error = fail(target);
    if (error) return Promise.reject(error);
    return new Promise((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port });
      socket.once('connect', () => resolve(socket));
      socket.once('error', reject);
    });
  };
  return Object.assign(connector, { dialled });
}

export const refusedError = (): Error => Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
