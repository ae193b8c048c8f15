/**
 * `serveGrpc(app, options)`: the gRPC binding on an HTTP/2 listener of its own beside Fastify,
 * serving the agent fastify-a2a registered (`app.a2a.get(prefix)`): the same dispatch, runtime and
 * store, listed in the agent's card while it runs, and closed in the same drain as the plugin's
 * streams (Fastify's `preClose`). The listener serves A2A 1.0's service and A2A 0.3's: each call's
 * path names the service, and so the version it speaks.
 */

import { type ChannelOptions, Server, ServerCredentials } from '@grpc/grpc-js';
import type { FastifyInstance } from 'fastify';
import type {} from 'fastify-a2a';
import { a2aServiceDefinition, GrpcBinding } from './binding.js';
import { invalidGrpcOption } from './errors.js';
import { GRPC_0_3, GRPC_1_0 } from './versions.js';

export interface GrpcServeOptions {
  /** The port to listen on; 0 picks a free one (read it from the result's `port`). */
  port: number;
  /** The address to listen on. @default '127.0.0.1' */
  host?: string;
  /** The prefix the agent was registered under with fastify-a2a. @default the only agent (or the root one) */
  prefix?: string;
  /**
   * The address clients reach this listener at, as the card's gRPC interface lists it
   * (`host:port`, what gRPC clients take as a target; a proxy's public address, say).
   * @default `<host>:<bound port>`
   */
  url?: string;
  /** TLS or not. @default ServerCredentials.createInsecure() (TLS ends at a proxy, or none) */
  credentials?: ServerCredentials;
  /** The largest request message accepted; larger ones are refused with RESOURCE_EXHAUSTED. @default 4 MiB */
  maxReceiveMessageBytes?: number;
  /** The largest response message sent; a larger one fails the call with RESOURCE_EXHAUSTED. @default unlimited */
  maxSendMessageBytes?: number;
  /**
   * How often the server pings a connection to learn whether the client is still there (HTTP/2
   * PING); the streams of a client that vanished without closing its connection then end.
   * @default off (grpc-js' default)
   */
  keepaliveTimeMs?: number;
  /** How long a keepalive ping may go unanswered before the connection is closed. @default 20 s */
  keepaliveTimeoutMs?: number;
  /**
   * How many calls (streams included) one HTTP/2 connection may have open at once; further ones
   * wait. @default unlimited (grpc-js' default)
   */
  maxConcurrentStreams?: number;
  /**
   * On close, after the runtime drained its turns, how long open streams get to write their final
   * events before the rest (following tasks on other workers) are ended with UNAVAILABLE. @default 1000
   */
  drainGraceMs?: number;
  /** Any other grpc-js server channel option (`grpc.*`), passed as given. */
  channelOptions?: ChannelOptions;
}

/** A running gRPC listener. */
export interface GrpcServer {
  /** The bound port. */
  readonly port: number;
  /** The address the card lists. */
  readonly url: string;
  /** Streams being written. */
  readonly openStreams: number;
  /** Ends the listener (the app's close does it too): open streams end, then the server shuts down. */
  close(): Promise<void>;
}

const NON_NEGATIVE = ['maxReceiveMessageBytes', 'maxSendMessageBytes', 'keepaliveTimeMs', 'keepaliveTimeoutMs'];

function checkOptions(options: GrpcServeOptions): void {
  if (options === null || typeof options !== 'object')
    throw invalidGrpcOption('serveGrpc(app, { port }) needs options.');
  if (!Number.isInteger(options.port) || options.port < 0 || options.port > 65535) {
    throw invalidGrpcOption(`"port" must be an integer from 0 to 65535 (got ${JSON.stringify(options.port)}).`);
  }
  for (const name of [...NON_NEGATIVE, 'drainGraceMs', 'maxConcurrentStreams'] as const) {
    const value = (options as unknown as Record<string, unknown>)[name];
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < (name === 'maxConcurrentStreams' ? 1 : 0)) {
      throw invalidGrpcOption(
        `"${name}" must be an integer of at least ${name === 'maxConcurrentStreams' ? 1 : 0} (got ${JSON.stringify(value)}).`,
      );
    }
  }
}

function channelOptionsOf(options: GrpcServeOptions): ChannelOptions {
  const channel: ChannelOptions = { ...options.channelOptions };
  const set = (key: string, value: number | undefined) => {
    if (value !== undefined) channel[key] = value;
  };
  set('grpc.max_receive_message_length', options.maxReceiveMessageBytes);
  set('grpc.max_send_message_length', options.maxSendMessageBytes);
  set('grpc.keepalive_time_ms', options.keepaliveTimeMs);
  set('grpc.keepalive_timeout_ms', options.keepaliveTimeoutMs);
  set('grpc.max_concurrent_streams', options.maxConcurrentStreams);
  return channel;
}

function bind(server: Server, address: string, credentials: ServerCredentials): Promise<number> {
  return new Promise((resolve, reject) => {
    server.bindAsync(address, credentials, (error, port) => {
      if (error === null) resolve(port);
      else reject(invalidGrpcOption(`cannot listen on ${address} (is the port in use?): ${error.message}`));
    });
  });
}

/** After the drain, how long calls still in flight (a unary call of a slow store, say) get before they are cut. */
const SHUTDOWN_TIMEOUT_MS = 5000;

/** Stops the server once its calls are done, or cuts them after `timeoutMs`. */
function shutDown(server: Server, timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      server.forceShutdown();
      resolve();
    }, timeoutMs);
    timer.unref();
    server.tryShutdown(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** `host:port`, with brackets around an IPv6 address. */
function hostPort(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/**
 * Starts the gRPC binding beside Fastify for the agent fastify-a2a registered on `app`. Call it
 * after `await app.register(a2aPlugin, …)` and before `app.listen()` / `app.ready()` (it adds the
 * close hook). Closing the app drains and closes it.
 * @throws {A2AError} INVALID_OPTIONS for bad options, no agent, or an app already started.
 */
export async function serveGrpc(app: FastifyInstance, options: GrpcServeOptions): Promise<GrpcServer> {
  checkOptions(options);
  if (!app.hasDecorator('a2a')) {
    throw invalidGrpcOption(
      'register fastify-a2a first: await app.register(a2aPlugin, { … }), then serveGrpc(app, …).',
    );
  }
  const agent = app.a2a.get(options.prefix);
  const binding = new GrpcBinding({
    dispatcher: agent.dispatcher,
    authenticate: (headers, callId) => agent.authenticate(headers, callId),
    logger: app.log,
  });
  const server = new Server(channelOptionsOf(options));
  for (const version of [GRPC_1_0, GRPC_0_3]) {
    server.addService(a2aServiceDefinition(version), binding.implementation(version));
  }

  let closing: Promise<void> | undefined;
  const removeInterfaces: (() => void)[] = [];
  const close = (): Promise<void> => {
    closing ??= (async () => {
      for (const remove of removeInterfaces.splice(0)) remove();
      // New turns are refused from here (UNAVAILABLE); running ones finish, and their streams with them.
      await agent.runtime.drain();
      const cut = await binding.drain(options.drainGraceMs ?? 1000);
      await shutDown(server, SHUTDOWN_TIMEOUT_MS);
      app.log.info({ streamsCut: cut }, 'a2a: gRPC server closed');
    })();
    return closing;
  };
  const host = options.host ?? '127.0.0.1';
  let port: number;
  try {
    port = await bind(server, hostPort(host, options.port), options.credentials ?? ServerCredentials.createInsecure());
  } catch (error) {
    server.forceShutdown();
    throw error;
  }
  try {
    // preClose: while Fastify still serves, beside the plugin's drain of its own streams.
    app.addHook('preClose', close);
  } catch (error) {
    server.forceShutdown();
    throw invalidGrpcOption(
      `call serveGrpc(app, …) before app.listen() or app.ready(): it adds the hook that closes it with the app (${(error as Error).message}).`,
    );
  }
  const url = options.url ?? hostPort(host, port);
  // Both versions at one address: 1.0 clients read `supportedInterfaces`, 0.3 clients
  // `additionalInterfaces` (the plugin lists the 0.3 entry there as `{ url, transport: 'GRPC' }`).
  for (const protocolVersion of ['1.0', '0.3'] as const) {
    removeInterfaces.push(agent.addInterface({ url, protocolBinding: 'GRPC', protocolVersion }));
  }
  app.log.info({ url, port }, 'a2a: serving gRPC');
  return {
    port,
    url,
    get openStreams() {
      return binding.openStreams;
    },
    close,
  };
}
