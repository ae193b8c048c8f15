/**
 * Issue 23, item 14: a body over the limit lost its answer. The 413 was written and the socket
 * closed while the client was still sending, so a client that writes its whole body first got
 * EPIPE / "fetch failed" (node:http sending 11 MiB blindly: 9 and 10 times in 10). Now the server
 * half-closes after the answer and reads the rest for a bounded time, so the client reads the 413;
 * a slowloris is still cut. The server runs in its own process on each store, as deployed.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { withPostgres } from '../../../../test-support/postgres.js';

const LIMIT = 1024 * 1024;
const SIZE = 8 * 1024 * 1024;
const server = fileURLToPath(new URL('./fixtures/body-limit-server.ts', import.meta.url));

const dir = mkdtempSync(join(tmpdir(), 'a2a-issue23-body-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const pg = withPostgres('a2a_issue23_body');
const STORES = [
  { name: 'memory', url: () => 'memory:' },
  { name: 'SQLite', url: () => `sqlite:${join(dir, 'a2a.db')}` },
  { name: 'Postgres', url: () => `${pg.url}?schema=${pg.schema}` },
];

const children: ChildProcess[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
});

async function start(storeUrl: string, bodyTimeoutMs = 30_000): Promise<number> {
  const child = spawn(process.execPath, ['--conditions=@fastify-a2a/source', '--import', 'tsx', server], {
    env: { ...process.env, STORE_URL: storeUrl, BODY_LIMIT: String(LIMIT), BODY_TIMEOUT_MS: String(bodyTimeoutMs) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not start:\n${output}`)), 30_000);
    const onData = (data: Buffer) => {
      output += data;
      const ready = /READY (\d+)/.exec(output);
      if (ready) {
        clearTimeout(timer);
        resolve(Number(ready[1]));
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
  });
}

/** node:http writing the whole body at once, then reading: the status and body, or the error code. */
function blindPost(port: number, path: string, headers: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': SIZE, ...headers },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk) => {
          text += chunk;
        });
        res.on('end', () => resolve(`${res.statusCode} ${text}`));
        res.on('error', (error: NodeJS.ErrnoException) => resolve(`response ${error.code}`));
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => resolve(`error ${error.code}`));
    req.end(Buffer.alloc(SIZE, 0x20));
  });
}

for (const store of STORES) {
  describe(`issue 23 on ${store.name}: a body over the limit`, () => {
    it('node:http and fetch, writing the whole body first, read the 413 every time, on both bindings', async () => {
      const port = await start(store.url());
      const answers: string[] = [];
      for (let i = 0; i < 5; i++) {
        answers.push(await blindPost(port, '/a2a'));
        answers.push(await blindPost(port, '/message:send', { 'a2a-version': '1.0' }));
      }
      for (const [i, answer] of answers.entries()) {
        expect(answer, `attempt ${i}`).toMatch(/^413 /);
        expect(answer).toContain(`larger than the ${LIMIT}-byte limit`);
      }
      for (let i = 0; i < 3; i++) {
        const res = await fetch(`http://127.0.0.1:${port}/a2a`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: Buffer.alloc(SIZE, 0x20),
        });
        expect(res.status).toBe(413);
        expect(((await res.json()) as { error: { code: number } }).error.code).toBe(-32600);
      }
      // The server goes on serving.
      const ok = await fetch(`http://127.0.0.1:${port}/a2a`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: 'none' } }),
      });
      expect(((await ok.json()) as { error: { code: number } }).error.code).toBe(-32001);
    });

    it('a client trickling an over-limit body gets the 413 and is cut at the deadline, not held', async () => {
      const port = await start(store.url(), 1000);
      const started = Date.now();
      const { response, closedAfterMs } = await new Promise<{ response: string; closedAfterMs: number }>(
        (resolve, reject) => {
          const socket = connect(port, '127.0.0.1', () => {
            socket.write(
              `POST /a2a HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${SIZE}\r\n\r\n`,
            );
          });
          const timer = setInterval(() => {
            if (!socket.destroyed) socket.write(' ');
          }, 50);
          let text = '';
          socket.on('data', (data) => {
            text += data;
          });
          socket.on('error', () => undefined);
          socket.on('close', () => {
            clearInterval(timer);
            resolve({ response: text, closedAfterMs: Date.now() - started });
          });
          setTimeout(() => reject(new Error('the connection was held open for 10 s')), 10_000).unref();
        },
      );
      expect(response).toMatch(/^HTTP\/1\.1 413/);
      expect(response).toContain('"code":-32600');
      expect(closedAfterMs).toBeLessThan(5000);
    });
  });
}
