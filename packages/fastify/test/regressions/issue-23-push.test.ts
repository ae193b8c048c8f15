/**
 * Issue 23, items 8 and 15, over real HTTP on every store, both bindings and both versions:
 * - a push config whose host does not resolve *yet* is accepted (a transient DNS failure must not
 *   lose a client's webhook), and delivered once the name resolves, the guard running again at
 *   delivery; a name resolving to a refused range, and a loopback literal, stay refused;
 * - refusals name the plugin's option, `pushAllowedCidrs`, not the core's `allowCidrs`.
 */

import type { Task } from '@fastify-a2a/core';
import { afterEach, describe, expect, it } from 'vitest';
import { nextId, userMessage, waitFor } from '../helpers.js';
import { protocolClient } from '../protocol/client.js';
import { startWebhookReceiver, type WebhookReceiver } from '../push/receiver.js';
import { issueStores, serveOn } from './issue-23-stores.js';

const BINDINGS = ['JSONRPC', 'HTTP+JSON'] as const;
const VERSIONS = ['0.3', '1.0'] as const;

/** A resolver answering from `table` (a name it lacks is ENOTFOUND), which a test may fill later. */
function tableResolver(table: Map<string, string>) {
  return async (hostname: string) => {
    const address = table.get(hostname);
    if (address === undefined) {
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    }
    return [{ address, family: 4 }];
  };
}

const receivers: WebhookReceiver[] = [];
afterEach(async () => {
  for (const receiver of receivers.splice(0)) await receiver.close();
});

for (const store of issueStores('a2a-issue23-push')) {
  describe(`issue 23 on ${store.name}`, () => {
    for (const binding of BINDINGS) {
      for (const version of VERSIONS) {
        it(`${binding} ${version}: a host that does not resolve yet is accepted and delivered to once it does; refused ranges are refused naming pushAllowedCidrs`, async () => {
          const receiver = await startWebhookReceiver();
          receivers.push(receiver);
          const port = new URL(receiver.url).port;
          const dns = new Map<string, string>([['internal.example', '10.0.0.5']]);
          const { base } = await serveOn(store, async (turn) => turn.complete('done'), {
            pushNotifications: true,
            pushAllowedCidrs: ['127.0.0.1/32'],
            pushResolver: tableResolver(dns),
            pushPollIntervalMs: 20,
            pushRetryDelaysMs: [100, 100, 100, 100, 100, 100, 100, 100, 100, 100],
          });
          const client = protocolClient(binding, base, version);
          const sent = await client.sendMessage({ message: userMessage('hi'), configuration: { blocking: true } });
          if (!sent.ok) throw new Error(`${sent.code}: ${sent.message}`);
          const taskId = (sent.result as Task).id;
          const config = (url: string, id: string) => ({ id, url, token: 'tok' });

          // Not resolvable yet: accepted (it was -32602 "does not resolve (ENOTFOUND)").
          const later = `later-${nextId('h').toLowerCase()}.example`;
          const accepted = await client.pushConfig('set', taskId, config(`http://${later}:${port}/hook`, 'c-later'));
          if (!accepted.ok) throw new Error(`${accepted.code}: ${accepted.message}`);
          const listed = await client.pushConfig('list', taskId);
          expect(JSON.stringify(listed)).toContain('c-later');

          // The name comes up: the next delivery checks it again and reaches the receiver.
          dns.set(later, '127.0.0.1');
          await waitFor(() => receiver.received.length > 0, 5000, 'the delivery once the name resolves');
          expect(receiver.received[0]?.headers['x-a2a-notification-token']).toBe('tok');

          // A name resolving to a private address, and a loopback literal not allow-listed, stay refused.
          const internal = await client.pushConfig('set', taskId, config('http://internal.example/hook', 'c-int'));
          expect(internal).toMatchObject({ ok: false, code: -32602 });
          const message = (internal as { message: string }).message;
          expect(message).toContain('resolves to 10.0.0.5, a private address');
          expect(message).toContain('allow it with pushAllowedCidrs (e.g. "10.0.0.5/32")');
          expect(message).not.toMatch(/\ballowCidrs\b/);
          const literal = await client.pushConfig('set', taskId, config('http://127.0.0.2/hook', 'c-lit'));
          expect(literal).toMatchObject({ ok: false, code: -32602 });
          expect((literal as { message: string }).message).toContain('pushAllowedCidrs');
        });
      }
    }
  });
}
