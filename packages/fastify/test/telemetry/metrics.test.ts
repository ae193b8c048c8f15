import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { a2aPlugin } from '../../src/index.js';
import { A2AMetrics } from '../../src/telemetry/metrics.js';
import { nextId, parseSse, rpcBody, testCard, userMessage } from '../helpers.js';
import { protoMessage, type Wire } from '../rest-helpers.js';
import { type Family, parsePrometheusText, sampleValue } from './prometheus-text.js';

const TOKEN = 'operator-secret-token';
let app: FastifyInstance | undefined;

afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function start(): Promise<string> {
  app = Fastify({ logger: false });
  await app.register(a2aPlugin, {
    agentCard: testCard,
    executor: async (turn) => turn.complete('done'),
    retention: false,
    drainTimeoutMs: 200,
    metrics: { bearerToken: TOKEN },
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

async function scrape(base: string): Promise<Map<string, Family>> {
  const res = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheusText(await res.text());
}

describe('metrics: GET /metrics', () => {
  it('counts known traffic by method, binding, version and outcome, in a strictly valid exposition', async () => {
    const base = await start();
    // Three JSON-RPC 0.3 sends, one HTTP+JSON 0.3 send, one stream, and one GetTask of an unknown task.
    for (let i = 0; i < 3; i++) {
      const res = await post(`${base}/a2a`, rpcBody('message/send', { message: userMessage(`hello ${i}`) }));
      expect(((await res.json()) as Wire).result.status.state).toBe('completed');
    }
    const restRes = await post(`${base}/v1/message:send`, { message: protoMessage('over REST') });
    expect(restRes.status).toBe(200);
    const stream = await post(`${base}/a2a`, rpcBody('message/stream', { message: userMessage('streamed') }), {
      accept: 'text/event-stream',
    });
    const frames = parseSse(await stream.text());
    expect(frames.length).toBeGreaterThan(0);
    const missing = await post(`${base}/a2a`, rpcBody('tasks/get', { id: nextId('no-such-task') }));
    expect(((await missing.json()) as Wire).error.code).toBe(-32001);

    const metrics = await scrape(base);
    const requests = (labels: Record<string, string>) => sampleValue(metrics, 'a2a_requests_total', labels);
    expect(requests({ method: 'SendMessage', binding: 'JSONRPC', version: '0.3', outcome: 'ok' })).toBe(3);
    expect(requests({ method: 'SendMessage', binding: 'HTTP+JSON', version: '0.3', outcome: 'ok' })).toBe(1);
    expect(requests({ method: 'SendStreamingMessage', binding: 'JSONRPC', version: '0.3', outcome: 'ok' })).toBe(1);
    expect(requests({ method: 'GetTask', binding: 'JSONRPC', version: '0.3', outcome: 'task_not_found' })).toBe(1);
    expect(
      sampleValue(metrics, 'a2a_request_duration_seconds_count', { method: 'SendMessage', binding: 'JSONRPC' }),
    ).toBe(3);
    expect(sampleValue(metrics, 'a2a_turns_started_total')).toBe(5);
    expect(sampleValue(metrics, 'a2a_turns_finished_total', { state: 'completed' })).toBe(5);
    expect(sampleValue(metrics, 'a2a_turn_duration_seconds_count', { state: 'completed' })).toBe(5);
    expect(sampleValue(metrics, 'a2a_turn_queue_wait_seconds_count')).toBe(5);
    expect(sampleValue(metrics, 'a2a_turns_running')).toBe(0);
    expect(sampleValue(metrics, 'a2a_streams_open')).toBe(0);
    // Every turn commits at least once; a blocking send on a new context writes its task in one commit.
    expect(sampleValue(metrics, 'a2a_store_commit_duration_seconds_count')).toBeGreaterThanOrEqual(5);
    expect(sampleValue(metrics, 'a2a_store_commit_events_sum')).toBeGreaterThanOrEqual(10);
    expect(sampleValue(metrics, 'a2a_lease_renewals_total', { outcome: 'ok' })).toBeGreaterThanOrEqual(1);
    const worker = metrics.get('a2a_worker_info')?.samples[0];
    expect(worker?.value).toBe(1);
    expect(worker?.labels.worker).toBe(app?.a2a.runtime.workerId);
    // Types and help as an operator's Prometheus reads them.
    expect(metrics.get('a2a_requests_total')?.type).toBe('counter');
    expect(metrics.get('a2a_turn_duration_seconds')?.type).toBe('histogram');
    expect(metrics.get('a2a_streams_open')?.type).toBe('gauge');
    expect(metrics.get('process_cpu_seconds_total')?.type).toBe('counter');
    // No label carries a task or context id: every label value is from a small, known set.
    for (const family of metrics.values()) {
      if (!family.name.startsWith('a2a_')) continue;
      expect(family.help, family.name).toBeTruthy();
      for (const sample of family.samples) {
        for (const [label, value] of Object.entries(sample.labels)) {
          if (label === 'worker' || label === 'le') continue;
          expect(value, `${sample.name} ${label}`).toMatch(/^[A-Za-z+_.0-9-]{1,40}$/);
          expect(value).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}/);
        }
      }
    }
  });

  it('refuses a scrape without the bearer token (401) or with another (403)', async () => {
    const base = await start();
    const none = await fetch(`${base}/metrics`);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(((await none.json()) as Wire).error).toMatch(/bearer token/);
    const wrong = await fetch(`${base}/metrics`, { headers: { authorization: 'Bearer not-the-token' } });
    expect(wrong.status).toBe(403);
    expect(await wrong.text()).not.toContain('a2a_');
  });

  it('asks metrics.authorize, on its own path: false answers 403', async () => {
    app = Fastify({ logger: false });
    await app.register(a2aPlugin, {
      agentCard: testCard,
      executor: async (turn) => turn.complete('x'),
      retention: false,
      metrics: {
        path: '/ops/metrics',
        authorize: (request) => request.headers['x-operator'] === 'yes',
        defaultMetrics: false,
      },
    });
    expect((await app.inject({ method: 'GET', url: '/ops/metrics' })).statusCode).toBe(403);
    const allowed = await app.inject({ method: 'GET', url: '/ops/metrics', headers: { 'x-operator': 'yes' } });
    expect(allowed.statusCode).toBe(200);
    const families = parsePrometheusText(allowed.body);
    expect(families.has('a2a_requests_total')).toBe(true);
    expect(families.has('process_cpu_seconds_total')).toBe(false);
    expect((await app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(404);
  });

  it('is off by default (404), and a bad metrics option fails register naming it', async () => {
    app = Fastify({ logger: false });
    await app.register(a2aPlugin, {
      agentCard: testCard,
      executor: async (turn) => turn.complete('x'),
      retention: false,
    });
    expect((await app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(404);
    const other = Fastify({ logger: false });
    await expect(
      other.register(a2aPlugin, {
        agentCard: testCard,
        executor: async (turn) => turn.complete('x'),
        metrics: { path: 'metrics' },
      }),
    ).rejects.toThrow(/"metrics\.path" must start with "\/"/);
    await other.close();
  });
});

describe('the strict Prometheus text parser', () => {
  it('rejects what Prometheus would reject', () => {
    const valid = '# HELP a_total A counter.\n# TYPE a_total counter\na_total{x="1"} 2\n';
    expect(sampleValue(parsePrometheusText(valid), 'a_total', { x: '1' })).toBe(2);
    const bad = [
      '# TYPE a_total counter\na_total 1', // no final line feed
      '# TYPE a_total counter\na_total{x="1"} 1\na_total{x="1"} 2\n', // duplicate series
      '# TYPE a_total counter\na_total{x=1} 1\n', // unquoted label value
      '# TYPE a_total counter\na_total{x="\\q"} 1\n', // invalid escape
      '# TYPE a_total counter\na_total one\n', // not a number
      '# TYPE a_total counter\n# TYPE a_total gauge\na_total 1\n', // two TYPE lines
      'a 1\n# TYPE a gauge\n', // TYPE after samples
      '# TYPE a gauge\na 1\n# TYPE b gauge\nb 1\na{x="2"} 1\n', // a family's lines apart
      '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n', // not cumulative
      '# TYPE h histogram\nh_bucket{le="1"} 1\nh_sum 1\nh_count 1\n', // no +Inf bucket
      '# TYPE a_total counter\na_total -1\n', // negative counter
    ];
    for (const text of bad) expect(() => parsePrometheusText(text), JSON.stringify(text)).toThrow();
  });
});

/** An agent's metrics, scraped once and dropped: weak references to it and to what it registered. */
async function dropped(): Promise<WeakRef<object>[]> {
  const metrics = new A2AMetrics({ workerId: () => 'w', runningTurns: () => 0, defaultMetrics: true });
  const text = await metrics.exposition();
  expect(text).toContain('process_cpu_seconds_total');
  expect(text).toContain('a2a_worker_info');
  return [new WeakRef(metrics), ...metrics.registry.getMetricsAsArray().map((metric) => new WeakRef(metric))];
}

describe('metrics: the default process metrics', () => {
  it('are collected once per process, not once per agent: a dropped agent’s metrics are released', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const refs: WeakRef<object>[] = [];
    for (let i = 0; i < 3; i++) refs.push(...(await dropped()));
    for (let i = 0; i < 5; i++) {
      await new Promise((r) => setTimeout(r, 20));
      gc();
    }
    // prom-client's GC observer keeps the histogram it feeds: one per agent would never be freed.
    const alive = refs.map((ref) => ref.deref()).filter((o) => o !== undefined);
    expect(alive.map((o) => (o as { name?: string }).name ?? 'A2AMetrics')).toEqual([]);
  });
});
