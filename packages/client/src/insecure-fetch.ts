/**
 * A `fetch` for one client that does not verify TLS certificates (the CLI's `--insecure`), so the
 * rest of the process keeps verifying: setting NODE_TLS_REJECT_UNAUTHORIZED would turn it off
 * process-wide and make Node print its own warning. Node's global fetch takes a per-request
 * `dispatcher` only from the undici package, which we do not depend on, so https: goes through
 * node:https with `rejectUnauthorized: false`; every other scheme goes to the global fetch.
 */

import { request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';

/** Statuses whose response has no body (a Response refuses one). */
const BODILESS = new Set([101, 103, 204, 205, 304]);

export const insecureFetch: typeof fetch = async (input, init = {}) => {
  const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
  if (url.protocol !== 'https:') return globalThis.fetch(input, init);
  const signal = init.signal ?? undefined;
  signal?.throwIfAborted();
  const headers = new Headers(init.headers);
  const body = init.body === undefined || init.body === null ? undefined : String(init.body);
  if (body !== undefined && !headers.has('content-length')) {
    headers.set('content-length', String(Buffer.byteLength(body)));
  }
  return new Promise<Response>((resolve, reject) => {
    const outgoing = httpsRequest(
      url,
      { method: init.method ?? 'GET', headers: Object.fromEntries(headers), rejectUnauthorized: false, signal },
      (incoming) => {
        const responseHeaders = new Headers();
        for (const [name, value] of Object.entries(incoming.headers)) {
          if (value === undefined) continue;
          for (const one of Array.isArray(value) ? value : [value]) responseHeaders.append(name, one);
        }
        const status = incoming.statusCode ?? 502;
        const stream = BODILESS.has(status) ? null : (Readable.toWeb(incoming) as ReadableStream<Uint8Array>);
        if (stream === null) incoming.resume();
        resolve(new Response(stream, { status, statusText: incoming.statusMessage ?? '', headers: responseHeaders }));
      },
    );
    // Shaped like fetch's own failure (a TypeError whose cause is the socket error), so the
    // client's retry and error messages read it the same way.
    outgoing.once('error', (error) =>
      reject(signal?.aborted ? signal.reason : Object.assign(new TypeError('fetch failed'), { cause: error })),
    );
    outgoing.end(body);
  });
};
