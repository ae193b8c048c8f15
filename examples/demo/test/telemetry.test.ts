/**
 * The demo's operator view as a real process: with A2A_MONITOR_TOKEN, `/metrics` answers the
 * operators' bearer token only (401 without, 403 with another) and counts what was sent; with
 * OTEL_EXPORTER_OTLP_ENDPOINT, spans reach an OTLP/HTTP collector (a server of this test's) with
 * the demo's service name and the A2A span names. Without either, `/metrics` is 404.
 */
import { createServer } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { demoMetrics } from '../src/telemetry.js';
import { rpc, startDemo, userMessage } from './demo-process.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** An OTLP/HTTP collector: records the bodies POSTed to /v1/traces. */
async function collector() {
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url === '/v1/traces') bodies.push(Buffer.concat(chunks).toString('utf8'));
      res.setHeader('content-type', 'application/json');
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, bodies };
}

describe('the demo for operators', () => {
  it('serves /metrics behind A2A_MONITOR_TOKEN and exports spans to OTEL_EXPORTER_OTLP_ENDPOINT', async () => {
    const otlp = await collector();
    const demo = await startDemo('memory:', {
      A2A_MONITOR_TOKEN: 'ops-token-at-least-16-chars',
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_SERVICE_NAME: 'demo-under-test',
    });
    closers.push(async () => void (await demo.stop()));
    expect(demo.readyLine).toContain('metrics at /metrics (bearer token); tracing to OTLP');
    const sent = await rpc<{ status: { state: string } }>(demo.baseUrl, 'message/send', {
      message: userMessage('hello operators'),
    });
    expect(sent.result?.status.state).toBe('completed');

    expect((await fetch(`${demo.baseUrl}/metrics`)).status).toBe(401);
    expect((await fetch(`${demo.baseUrl}/metrics`, { headers: { authorization: 'Bearer nope' } })).status).toBe(403);
    const metrics = await fetch(`${demo.baseUrl}/metrics`, {
      headers: { authorization: 'Bearer ops-token-at-least-16-chars' },
    });
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toMatch(
      /^a2a_requests_total\{method="SendMessage",binding="JSONRPC",version="0\.3",outcome="ok"\} 1$/m,
    );

    // Stopping flushes the batch of spans to the collector.
    await demo.stop();
    const exported = otlp.bodies.join('\n');
    expect(exported).toContain('demo-under-test');
    expect(exported).toContain('SendMessage');
    expect(exported).toContain('a2a.task.state');
  });

  it('has no /metrics without A2A_MONITOR_TOKEN', async () => {
    expect(demoMetrics({})).toEqual({});
    expect(demoMetrics({ A2A_MONITOR_TOKEN: '  ' })).toEqual({});
    const demo = await startDemo('memory:');
    closers.push(async () => void (await demo.stop()));
    expect(demo.readyLine).toContain('metrics off; tracing off');
    expect((await fetch(`${demo.baseUrl}/metrics`)).status).toBe(404);
  });
});
