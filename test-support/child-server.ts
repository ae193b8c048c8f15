/**
 * For test servers that run as child processes (the multi-worker, cross-worker tracing and
 * body-limit tests): the parent reads the port from a `READY <port>` line on stdout and stops the
 * server with SIGTERM, which closes it as a deployment's shutdown does.
 */
import type { FastifyInstance } from 'fastify';

/** Listens on a free loopback port, prints `READY <port>`, and closes the app on SIGTERM. */
export async function serveAsChildProcess(app: FastifyInstance): Promise<void> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  process.stdout.write(`READY ${typeof address === 'object' && address ? address.port : 0}\n`);
  process.once('SIGTERM', () => {
    app.close().then(
      () => process.exit(0),
      (error) => {
        process.stderr.write(`close failed: ${(error as Error).message}\n`);
        process.exit(1);
      },
    );
  });
}
