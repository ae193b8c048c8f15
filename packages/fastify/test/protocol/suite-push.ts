/**
 * The protocol suite's scenarios for push notifications and the capabilities a card does not declare
 * (see ./suite.ts).
 */

import type { Task } from '@fastify-a2a/core';
import { afterEach, describe, expect, it } from 'vitest';
import { echoAgent } from '../../../../test-support/agents.js';
import type { A2APluginOptions } from '../../src/index.js';
import { asTask, textParts, userMessage, waitFor } from '../helpers.js';
import { startWebhookReceiver, type WebhookReceiver } from '../push/receiver.js';
import { ok } from './client.js';
import { taskFrom as v1TaskFrom } from './proto-json-1.0.js';
import { gate, type SuiteContext } from './suite-context.js';

export function pushScenarios({ version, serve }: SuiteContext): void {
  describe('push notifications (§7.5–7.8, §9.5)', () => {
    const PUSH: Partial<A2APluginOptions> = {
      pushNotifications: true,
      pushAllowedCidrs: ['127.0.0.1/32'],
      pushPollIntervalMs: 20,
    };
    let receiver: WebhookReceiver;
    afterEach(async () => receiver?.close());

    interface Config {
      id?: string;
      url?: string;
      token?: string;
    }
    /** A config from any of the wire forms: 0.3's nested one (JSON-RPC or HTTP+JSON), 1.0's flat one. */
    function configOf(wire: unknown): Config {
      const outer = wire as { pushNotificationConfig?: Config } & Config;
      const { id, url, token } = outer.pushNotificationConfig ?? outer;
      return { id, url, ...(token === undefined ? {} : { token }) };
    }
    const configsOf = (wire: unknown): Config[] =>
      (Array.isArray(wire) ? wire : (wire as { configs: unknown[] }).configs).map(configOf);
    /** The task a notification carries: 0.3's Task, or 1.0's StreamResponse `{ task }`. */
    const notifiedTask = (body: unknown): Task =>
      version === '0.3' ? (body as Task) : v1TaskFrom((body as { task: unknown }).task);

    it('set, get, list and delete configs; several per task, and an id-less one gets the task id', async () => {
      receiver = await startWebhookReceiver();
      const { client } = await serve(echoAgent, PUSH);
      const task = asTask(ok(await client.sendMessage({ message: userMessage('hello') })));
      const set = ok(await client.pushConfig('set', task.id, { id: 'c-1', url: receiver.url, token: 'tok-1' }));
      expect(configOf(set)).toEqual({ id: 'c-1', url: receiver.url, token: 'tok-1' });
      ok(await client.pushConfig('set', task.id, { url: `${receiver.url}?second` }));
      expect(configOf(ok(await client.pushConfig('get', task.id, undefined, 'c-1')))).toEqual({
        id: 'c-1',
        url: receiver.url,
        token: 'tok-1',
      });
      expect(configOf(ok(await client.pushConfig('get', task.id, undefined, task.id)))).toEqual({
        id: task.id,
        url: `${receiver.url}?second`,
      });
      expect(configsOf(ok(await client.pushConfig('list', task.id))).map((c) => c.id)).toEqual(['c-1', task.id]);
      ok(await client.pushConfig('delete', task.id, undefined, 'c-1'));
      expect(configsOf(ok(await client.pushConfig('list', task.id))).map((c) => c.id)).toEqual([task.id]);
      expect(await client.pushConfig('get', task.id, undefined, 'c-1')).toMatchObject({ ok: false, code: -32001 });
      expect(await client.pushConfig('list', 'no-such-task')).toMatchObject({ ok: false, code: -32001 });
    });

    it('deleting a config is idempotent (1.0 §3.1.10): a second delete succeeds as the first; an unknown task is -32001', async () => {
      receiver = await startWebhookReceiver();
      const { client } = await serve(echoAgent, PUSH);
      const task = asTask(ok(await client.sendMessage({ message: userMessage('hello') })));
      ok(await client.pushConfig('set', task.id, { id: 'gone', url: receiver.url }));
      ok(await client.pushConfig('set', task.id, { id: 'kept', url: receiver.url }));
      const first = ok(await client.pushConfig('delete', task.id, undefined, 'gone'));
      const second = ok(await client.pushConfig('delete', task.id, undefined, 'gone'));
      expect(second).toEqual(first);
      expect(configsOf(ok(await client.pushConfig('list', task.id))).map((c) => c.id)).toEqual(['kept']);
      expect(await client.pushConfig('get', task.id, undefined, 'gone')).toMatchObject({ ok: false, code: -32001 });
      expect(await client.pushConfig('delete', 'no-such-task', undefined, 'gone')).toMatchObject({
        ok: false,
        code: -32001,
      });
    });

    it("a send's push config delivers the task's final state in this version's form, with the token", async () => {
      receiver = await startWebhookReceiver();
      const held = gate();
      const { client } = await serve(async (turn) => {
        await turn.working('on it');
        await held.opened;
        await turn.artifact({ artifactId: 'out', text: 'result' });
        await turn.complete('done');
      }, PUSH);
      const task = asTask(
        ok(
          await client.sendMessage({
            message: userMessage('go'),
            configuration: {
              blocking: false,
              pushNotificationConfig: {
                id: 'mine',
                url: receiver.url,
                authentication: { schemes: ['Bearer'], credentials: 'secret-1' },
              },
            },
          }),
        ),
      );
      held.open();
      await waitFor(
        () => receiver.received.some((n) => notifiedTask(n.body).status.state === 'completed'),
        5000,
        'the completed notification',
      );
      const last = receiver.received.at(-1)!;
      expect(last.headers.authorization).toBe('Bearer secret-1');
      expect(last.headers['x-a2a-notification-token']).toBe('secret-1');
      const notified = notifiedTask(last.body);
      expect(notified.id).toBe(task.id);
      expect(textParts(notified.artifacts?.[0]?.parts)).toBe('result');
      if (version === '0.3') expect((last.body as Task).kind).toBe('task');
      else
        expect((last.body as { task: { status: { state: string } } }).task.status.state).toBe('TASK_STATE_COMPLETED');
      const configs = configsOf(ok(await client.pushConfig('list', task.id)));
      expect(configs).toEqual([{ id: 'mine', url: receiver.url }]);
    });

    it('refuses a URL inside the network at set time and on a send (-32602, naming why)', async () => {
      const { client } = await serve(echoAgent, PUSH);
      const task = asTask(ok(await client.sendMessage({ message: userMessage('hello') })));
      const refused = await client.pushConfig('set', task.id, { url: 'http://10.0.0.5/hook' });
      expect(refused).toMatchObject({ ok: false, code: -32602 });
      expect((refused as { message: string }).message).toContain('a private address (RFC 1918)');
      const metadata = await client.pushConfig('set', task.id, { url: 'http://169.254.169.254/latest/meta-data' });
      expect(metadata).toMatchObject({ ok: false, code: -32602 });
      const send = await client.sendMessage({
        message: userMessage('hello'),
        configuration: { pushNotificationConfig: { url: 'http://[fd00::1]/hook' } },
      });
      expect(send).toMatchObject({ ok: false, code: -32602 });
      expect(configsOf(ok(await client.pushConfig('list', task.id)))).toEqual([]);
    });
  });

  describe('capabilities the card does not declare', () => {
    it.each(['set', 'get', 'list', 'delete'] as const)(
      'push notification config %s answers -32003 (not supported)',
      async (operation) => {
        const { client } = await serve(echoAgent);
        const answer = await client.pushConfig(operation, 't-1', { url: 'https://example.com/hook' });
        expect(answer).toMatchObject({ ok: false, code: -32003 });
      },
    );

    it('push notification config set still validates its params first (-32602)', async () => {
      const { client } = await serve(echoAgent);
      expect(await client.pushConfig('set', 't-1')).toMatchObject({ ok: false, code: -32602 });
    });

    it('the authenticated extended card answers -32007', async () => {
      const { client } = await serve(echoAgent);
      expect(await client.getExtendedCard()).toMatchObject({ ok: false, code: -32007 });
    });
  });
}
