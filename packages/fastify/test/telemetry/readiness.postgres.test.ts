/**
 * Readiness (`GET /a2a/health/ready`) with a Postgres store made unreachable for real: the store
 * talks to Postgres through a TCP proxy of this test's, which is shut (its sockets destroyed) and
 * later opened again on the same port. While it is shut the store's ping and its LISTEN connection
 * fail and the worker's lease runs out: readiness answers 503 naming those checks, liveness 503;
 * once it is back, readiness answers 200 again.
 */
import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';
import { MemoryStore } from '@fastify-a2a/store-memory';
import { PostgresStore } from '@fastify-a2a/store-postgres';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withPostgres } from '../../../../test-support/postgres.js';
import { a2aPlugin } from '../../src/index.js';
import { listen, testCard } from '../helpers.js';
import type { Wire } from '../rest-helpers.js';

const pg = withPostgres('readiness');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A TCP proxy to the Postgres server that can be shut and opened again on the same port. */
class TcpProxy {
  #server: Server | undefined;
  readonly #sockets = new Set<Socket>();
  port = 0;
  constructor(
    readonly host: string,
    readonly targetPort: number,
  ) {}

  async open(): Promise<void> {
    const server = createServer((client) => {
      const upstream = tcpConnect(this.targetPort, this.host);
      for (const socket of [client, upstream]) {
        this.#sockets.add(socket);
        socket.on('close', () => this.#sockets.delete(socket));
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream);
      upstream.pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as { port: number }).port;
    this.#server = server;
  }

  async shut(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  }
}

let proxy: TcpProxy;
let app: FastifyInstance;
let base: string;

beforeAll(async () => {
  const target = new URL(pg.url);
  proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
  await proxy.open();
  const viaProxy = new URL(pg.url);
  viaProxy.hostname = '127.0.0.1';
  viaProxy.port = String(proxy.port);
  app = Fastify({ logger: false });
  await app.register(a2aPlugin, {
    agentCard: testCard,
    executor: async (turn) => turn.complete('ok'),
    store: new PostgresStore({
      connectionString: viaProxy.toString(),
      schema: pg.schema,
      poolConfig: { connectionTimeoutMillis: 1000 },
    }),
    retention: false,
    drainTimeoutMs: 200,
    leaseTtlMs: 1000,
  });
  base = await listen(app);
});

afterAll(async () => {
  await proxy?.shut();
  await app?.close();
});

async function ready(): Promise<{ status: number; body: Wire }> {
  const res = await fetch(`${base}/a2a/health/ready`, { signal: AbortSignal.timeout(10_000) });
  return { status: res.status, body: await res.json() };
}

async function waitFor(status: number, check: (body: Wire) => boolean, timeoutMs = 20_000): Promise<Wire> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    const answer = await ready();
    last = answer;
    if (answer.status === status && check(answer.body)) return answer.body;
    await sleep(100);
  }
  throw new Error(`readiness never answered ${status} as expected; last: ${JSON.stringify(last)}`);
}

describe('readiness on Postgres', () => {
  it('is 200 with its checks while the store answers, 503 once it is unreachable, and 200 again after', async () => {
    const healthy = await ready();
    expect(healthy.status).toBe(200);
    expect(healthy.body).toMatchObject({
      status: 'ready',
      checks: {
        store: { ok: true },
        lease: { ok: true },
        notifications: { ok: true, mode: 'listen' },
        push: { enabled: false },
      },
    });
    expect(typeof healthy.body.checks.store.latencyMs).toBe('number');
    // Unauthenticated: it does not name the worker (host and pid).
    expect(healthy.body).not.toHaveProperty('worker');

    await proxy.shut();
    const down = await waitFor(
      503,
      (body) => !body.checks.store.ok && !body.checks.notifications.ok && !body.checks.lease.ok,
    );
    expect(down.status).toBe('unavailable');
    // Unauthenticated: nothing about the deployment (host, port, user, schema) in the answer.
    expect(JSON.stringify(down)).not.toMatch(new RegExp(`${proxy.port}|${pg.schema}|postgres`));
    expect((await fetch(`${base}/a2a/health`)).status).toBe(503);

    await proxy.open();
    const back = await waitFor(200, (body) => body.status === 'ready');
    expect(back.checks).toMatchObject({ store: { ok: true }, lease: { ok: true }, notifications: { ok: true } });
    expect((await fetch(`${base}/a2a/health`)).status).toBe(200);
  });
});

describe('readiness on the memory store', () => {
  it('has no connection to lose: notifications are in-process', async () => {
    const memory = Fastify({ logger: false });
    try {
      await memory.register(a2aPlugin, {
        agentCard: testCard,
        executor: async (turn) => turn.complete('ok'),
        store: new MemoryStore(),
        retention: false,
      });
      const res = await memory.inject({ method: 'GET', url: '/a2a/health/ready' });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({
        status: 'ready',
        checks: { store: { ok: true }, lease: { ok: true }, notifications: { ok: true, mode: 'in-process' } },
      });
    } finally {
      await memory.close();
    }
  });
});
