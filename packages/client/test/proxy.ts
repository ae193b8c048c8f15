/**
 * A round-robin HTTP load balancer for the multi-worker tests: each request goes to the next live
 * upstream, bodies and streams piped through. When an upstream dies mid-response the client's
 * connection is cut too, as behind a real balancer. `cutNextResponse` makes it drop the client's
 * connection once the upstream has answered a matching request — a response lost after the
 * server read the request.
 */

import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface Upstream {
  id: string;
  url: string;
  alive(): boolean;
}

export interface Routed {
  upstream: string;
  method: string;
  path: string;
  body: string;
  stream: boolean;
}

export class Balancer {
  readonly routes: Routed[] = [];
  #server: Server | undefined;
  #next = 0;
  #cut: ((body: string) => boolean) | undefined;
  readonly #sockets = new Set<Socket>();
  url = '';

  constructor(private readonly upstreams: () => Upstream[]) {}

  async start(): Promise<this> {
    this.#server = createServer((req, res) => this.#handle(req, res));
    this.#server.on('connection', (socket) => {
      this.#sockets.add(socket);
      socket.once('close', () => this.#sockets.delete(socket));
    });
    await new Promise<void>((resolve) => this.#server?.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    return this;
  }

  /** The next request whose body matches has its answer dropped: the connection is cut instead. */
  cutNextResponse(match: (body: string) => boolean): void {
    this.#cut = match;
  }

  #pick(): Upstream {
    const live = this.upstreams().filter((u) => u.alive());
    const upstream = live[this.#next++ % live.length];
    if (upstream === undefined) throw new Error('no live upstream');
    return upstream;
  }

  #handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      let upstream: Upstream;
      try {
        upstream = this.#pick();
      } catch {
        res.writeHead(503).end();
        return;
      }
      const stream = String(req.headers.accept ?? '').includes('text/event-stream');
      this.routes.push({
        upstream: upstream.id,
        method: req.method ?? 'GET',
        path: req.url ?? '/',
        body: body.toString(),
        stream,
      });
      const cut = this.#cut?.(body.toString()) === true;
      if (cut) this.#cut = undefined;
      const target = new URL(req.url ?? '/', upstream.url);
      const headers = { ...req.headers, host: target.host };
      const forward = request(target, { method: req.method, headers }, (answer) => {
        if (cut) {
          // The server has read the request and answered; the client never gets the answer.
          answer.resume();
          answer.once('end', () => res.socket?.destroy());
          return;
        }
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        answer.once('error', () => res.socket?.destroy());
        answer.once('aborted', () => res.socket?.destroy());
        answer.socket.once('close', () => {
          if (!answer.complete) res.socket?.destroy();
        });
      });
      forward.once('error', () => {
        if (res.headersSent) res.socket?.destroy();
        else res.writeHead(502).end();
      });
      forward.end(body);
    });
  }

  async stop(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.#server ? this.#server.close(() => resolve()) : resolve()));
  }
}
