/**
 * A webhook receiver for push notification tests: an HTTP server on 127.0.0.1 (the only address
 * these tests ever send to; the agents under test allow-list it, loopback being refused otherwise)
 * that records every POST and answers with the status the test chooses.
 */

import { createServer, type IncomingHttpHeaders } from 'node:http';

export interface Notification {
  readonly headers: IncomingHttpHeaders;
  readonly url: string;
  /** The parsed JSON body. */
  readonly body: unknown;
  /** `Date.now()` when the body had arrived. */
  readonly at: number;
}

export interface WebhookReceiver {
  /** `http://127.0.0.1:<port>/hook`. */
  readonly url: string;
  readonly port: number;
  readonly received: Notification[];
  /** The status of the next answers (200 unless set). */
  answer: (n: number) => number;
  close(): Promise<void>;
}

export async function startWebhookReceiver(port = 0): Promise<WebhookReceiver> {
  const received: Notification[] = [];
  const receiver = {
    answer: (_n: number) => 200,
  } as { answer: (n: number) => number };
  let n = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const status = receiver.answer(n++);
      if (status >= 200 && status < 300) {
        received.push({
          headers: req.headers,
          url: req.url ?? '',
          body: JSON.parse(Buffer.concat(chunks).toString('utf8')),
          at: Date.now(),
        });
      }
      res.statusCode = status;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the receiver has no port');
  return Object.assign(receiver, {
    url: `http://127.0.0.1:${address.port}/hook`,
    port: address.port,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
