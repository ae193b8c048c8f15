/**
 * The demo's push notifications as a real process: with `A2A_PUSH_ALLOWED_HOSTS=127.0.0.1` a
 * message/send with a push config delivers to a receiver on loopback; without the allow-list the
 * same URL is refused at set (-32602, naming loopback), and nothing is sent.
 */
import { createServer } from 'node:http';
import type { Task } from '@fastify-a2a/core';
import { afterEach, describe, expect, it } from 'vitest';
import { demoPush } from '../src/push.js';
import { rpc, startDemo, userMessage } from './demo-process.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function receiver() {
  const bodies: Task[] = [];
  const tokens: (string | undefined)[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      bodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Task);
      tokens.push(req.headers['x-a2a-notification-token'] as string | undefined);
      res.end();
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
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`, bodies, tokens };
}

describe('the demo with push notifications', () => {
  it('delivers to a loopback receiver it allow-lists, and refuses the same URL without the allow-list', async () => {
    const r = await receiver();
    const allowed = await startDemo('memory:', { A2A_PUSH_ALLOWED_HOSTS: '127.0.0.1' });
    expect(allowed.readyLine).toContain('push: also 127.0.0.1');
    const sent = await rpc<Task>(allowed.baseUrl, 'message/send', {
      message: userMessage('hello push'),
      configuration: { pushNotificationConfig: { url: r.url, token: 'demo-token' } },
    });
    expect(sent.result?.status.state).toBe('completed');
    const deadline = Date.now() + 10_000;
    while (!r.bodies.some((b) => b.status.state === 'completed') && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const completed = r.bodies.find((b) => b.status.state === 'completed');
    expect(completed?.id).toBe(sent.result?.id);
    expect(r.tokens.every((t) => t === 'demo-token')).toBe(true);
    await allowed.stop();

    const closed = await startDemo('memory:');
    expect(closed.readyLine).toContain('push: public receivers only');
    const task = await rpc<Task>(closed.baseUrl, 'message/send', { message: userMessage('hello') });
    const refused = await rpc(closed.baseUrl, 'tasks/pushNotificationConfig/set', {
      taskId: task.result?.id,
      pushNotificationConfig: { url: r.url },
    });
    expect(refused.error?.code).toBe(-32602);
    expect(refused.error?.message).toContain('loopback');
    const before = r.bodies.length;
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(r.bodies.length).toBe(before);
    await closed.stop();
  });

  it('reads the allow-lists and the throttle from the environment', () => {
    expect(
      demoPush({
        A2A_PUSH_ALLOWED_HOSTS: ' hooks.internal , 127.0.0.1:9000,',
        A2A_PUSH_ALLOWED_CIDRS: '10.1.0.0/16',
        A2A_PUSH_THROTTLE_MS: '500',
      }),
    ).toEqual({
      pushNotifications: true,
      pushAllowedHosts: ['hooks.internal', '127.0.0.1:9000'],
      pushAllowedCidrs: ['10.1.0.0/16'],
      pushThrottleMs: 500,
    });
    expect(demoPush({})).toEqual({ pushNotifications: true });
    expect(() => demoPush({ A2A_PUSH_THROTTLE_MS: 'soon' })).toThrow('A2A_PUSH_THROTTLE_MS must be a number');
  });
});
