/**
 * The demo's monitor as a real process: on at /monitor when A2A_MONITOR_TOKEN is set, answering
 * the operators' bearer token only; off (404) without it.
 */
import { describe, expect, it } from 'vitest';
import { startDemo } from './demo-process.js';

const TOKEN = 'demo-operator-token-0123456789';

describe('the demo with A2A_MONITOR_TOKEN', () => {
  it('serves the monitor to the operators’ token only, and nothing without the variable', async () => {
    // Trailing whitespace (a secret file's newline) is not part of the token, as for /metrics.
    const on = await startDemo('memory:', { A2A_MONITOR_TOKEN: `${TOKEN}\n` });
    expect(on.readyLine).toContain('monitor at /monitor/');
    const agents = await fetch(`${on.baseUrl}/monitor/agents`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(agents.status).toBe(200);
    expect(((await agents.json()) as { workers: unknown[] }).workers).toHaveLength(1);
    expect((await fetch(`${on.baseUrl}/monitor/agents`)).status).toBe(401);
    expect((await fetch(`${on.baseUrl}/monitor/agents`, { headers: { authorization: 'Bearer nope' } })).status).toBe(
      403,
    );
    expect((await fetch(`${on.baseUrl}/monitor/`)).headers.get('content-type')).toContain('text/html');
    await on.stop();

    const off = await startDemo('memory:');
    expect(off.readyLine).toContain('monitor off');
    expect((await fetch(`${off.baseUrl}/monitor/`)).status).toBe(404);
  }, 60_000);
});
