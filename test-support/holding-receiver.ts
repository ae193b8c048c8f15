/**
 * A webhook receiver on 127.0.0.1 for the push tests that kill the delivering worker: it records
 * every notification (state, token, time) and leaves the one carrying `control.holdState`
 * unanswered, so its POST hangs until the worker sending it dies.
 */
import { createServer, type ServerResponse } from 'node:http';

export interface Hit {
  /** The notified task's `status.state` (a 0.3 Task payload). */
  state: string;
  /** The `X-A2A-Notification-Token` header. */
  token: string | undefined;
  at: number;
  /** Answered 200; false: held open until the sender died. */
  answered: boolean;
}

export interface HoldingReceiver {
  url: string;
  hits: Hit[];
  control: { holdState: string | undefined };
  close(): Promise<void>;
}

export async function holdingReceiver(): Promise<HoldingReceiver> {
  const hits: Hit[] = [];
  const held: ServerResponse[] = [];
  const control: HoldingReceiver['control'] = { holdState: undefined };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const task = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { status: { state: string } };
      const hold = task.status.state === control.holdState;
      hits.push({
        state: task.status.state,
        token: req.headers['x-a2a-notification-token'] as string | undefined,
        at: Date.now(),
        answered: !hold,
      });
      if (hold) held.push(res);
      else res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`,
    hits,
    control,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
