/**
 * Issue 31, item 1: a request whose body is not JSON by its Content-Type (`text/plain`, a form,
 * none, one Fastify cannot read) is ContentTypeNotSupported, as an independent A2A 1.0 conformance
 * client expects: HTTP 415 with the binding's error body (1.0 HTTP+JSON: AIP-193, reason
 * CONTENT_TYPE_NOT_SUPPORTED; JSON-RPC: -32005), both versions, over real HTTP on every store. It
 * was HTTP 400 / -32600. The agent never runs for such a request.
 */

import { describe, expect, it } from 'vitest';
import { nextId } from '../helpers.js';
import { BINDINGS, issueStores, serveOn, VERSIONS } from './issue-23-stores.js';

/** A send of each (binding, version): its path and its JSON body. */
function sendRequest(
  binding: (typeof BINDINGS)[number],
  version: (typeof VERSIONS)[number],
): { path: string; body: string } {
  const messageId = nextId('m');
  if (binding === 'JSONRPC') {
    const params =
      version === '0.3'
        ? { message: { kind: 'message', role: 'user', messageId, parts: [{ kind: 'text', text: 'hi' }] } }
        : { message: { role: 'ROLE_USER', messageId, parts: [{ text: 'hi' }] } };
    const method = version === '0.3' ? 'message/send' : 'SendMessage';
    return { path: '/a2a', body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params }) };
  }
  return version === '0.3'
    ? {
        path: '/v1/message:send',
        body: JSON.stringify({ message: { role: 'ROLE_USER', messageId, content: [{ text: 'hi' }] } }),
      }
    : {
        path: '/message:send',
        body: JSON.stringify({ message: { role: 'ROLE_USER', messageId, parts: [{ text: 'hi' }] } }),
      };
}

/** The Content-Types refused: `undefined` sends none (fetch adds none to a byte body). */
const NOT_JSON: readonly (string | undefined)[] = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  undefined,
  'json',
];

for (const store of issueStores('a2a-issue31-content-type')) {
  describe(`issue 31, item 1, on ${store.name}`, () => {
    for (const binding of BINDINGS) {
      it.each(VERSIONS)(
        `${binding} %s answers a body that is not JSON with 415 ContentTypeNotSupported`,
        async (version) => {
          let runs = 0;
          const { base } = await serveOn(store, async (turn) => {
            runs++;
            await turn.complete('ran');
          });
          const { path, body } = sendRequest(binding, version);
          for (const contentType of NOT_JSON) {
            const res = await fetch(`${base}${path}`, {
              method: 'POST',
              headers: {
                ...(contentType === undefined ? {} : { 'content-type': contentType }),
                ...(version === '1.0' ? { 'a2a-version': '1.0' } : {}),
              },
              body: new TextEncoder().encode(body),
            });
            const what = `${binding} ${version} with ${contentType ?? 'no Content-Type'}`;
            expect(res.status, what).toBe(415);
            expect(res.headers.get('content-type'), what).toMatch(/^application\/json/);
            const answer = (await res.json()) as Record<string, unknown>;
            if (binding === 'JSONRPC') {
              expect(answer, what).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32005 } });
              const error = answer.error as { message: string; data: unknown };
              expect(error.message, what).toContain('must be application/json');
              if (version === '1.0') {
                expect(error.data, what).toEqual([
                  expect.objectContaining({
                    '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
                    reason: 'CONTENT_TYPE_NOT_SUPPORTED',
                  }),
                ]);
              }
            } else if (version === '1.0') {
              // AIP-193: `{ error: google.rpc.Status }`.
              expect(answer, what).toMatchObject({
                error: {
                  code: 415,
                  status: 'INVALID_ARGUMENT',
                  details: [expect.objectContaining({ reason: 'CONTENT_TYPE_NOT_SUPPORTED' })],
                },
              });
            } else {
              expect(answer, what).toMatchObject({ code: -32005, error: 'ContentTypeNotSupportedError' });
            }
          }
          expect(runs).toBe(0);
          // The same request as JSON is served: only the Content-Type was wrong.
          const served = await fetch(`${base}${path}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...(version === '1.0' ? { 'a2a-version': '1.0' } : {}) },
            body,
          });
          expect(served.status).toBe(200);
          expect(runs).toBe(1);
        },
      );
    }
  });
}
