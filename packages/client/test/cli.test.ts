/**
 * The `a2a` binary, spawned for real against our server on a real port: both output formats, the
 * exit codes of a2a-cli SPEC §9.6, `exec:` / `file:` header values, and one clear line (never a
 * stack trace) for a bad URL or a server that is not an A2A agent.
 */

import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { bearerTokens } from 'fastify-a2a';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { a2a, BIN, ensureBuilt } from './cli-process.js';
import { type Served, serve, tempDir } from './helpers.js';

// biome-ignore lint/suspicious/noExplicitAny: the CLI's JSON output, read member by member in assertions.
type Json = Record<string, any>;

let served: Served;
let secured: Served;
let tmp: Awaited<ReturnType<typeof tempDir>>;
const TOKEN = 'tok-3f9a0c1e-secret';

beforeAll(async () => {
  ensureBuilt();
  tmp = await tempDir();
  served = await serve('memory:');
  secured = await serve('memory:', { authenticate: bearerTokens({ [TOKEN]: 'alice' }) });
}, 120_000);

afterAll(async () => {
  await served?.close();
  await secured?.close();
  await tmp?.remove();
});

const stderrIsOneLine = (stderr: string) => {
  expect(stderr.trim().split('\n')).toHaveLength(1);
  expect(stderr).not.toMatch(/\n\s+at /);
};

describe('a2a: help and version', () => {
  it('prints usage for the tool and each command, and its version', async () => {
    const top = await a2a(['--help']);
    expect(top.code).toBe(0);
    expect(top.stdout).toContain('Usage: a2a <command>');
    expect(top.stdout).toContain('task push-config create');
    const send = await a2a(['send', '--help']);
    expect(send.code).toBe(0);
    expect(send.stdout).toContain('Usage: a2a send');
    const version = await a2a(['--version']);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('exits 2 with A2ACLI_ERR_USAGE on a bad flag', async () => {
    const run = await a2a(['send', '-a', served.url, 'hi', '--no-such-flag', '-o', 'json']);
    expect(run.code).toBe(2);
    expect((run.json() as Json).error.code).toBe('A2ACLI_ERR_USAGE');
    const text = await a2a(['send', '--media-type', 'text/plain', '-a', served.url]);
    expect(text.code).toBe(2);
    stderrIsOneLine(text.stderr);
  });
});

describe('a2a: against our server', () => {
  it('card get: text fields, and the card as sent with -o json', async () => {
    const text = await a2a(['card', 'get', served.url]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('Name: Client test agent\n');
    expect(text.stdout).toMatch(/^Selected Interface: JSONRPC 1\.0 http:\/\/127\.0\.0\.1:\d+\/a2a$/m);
    const json = await a2a(['card', 'get', '-a', served.url, '-o', 'json', '--validate']);
    expect(json.code).toBe(0);
    expect((json.json() as Json).name).toBe('Client test agent');
  });

  it('send: one SendMessageResponse in json, labelled fields and blocks in text', async () => {
    const json = await a2a(['send', '-a', served.url, 'hello', '-o', 'json']);
    expect(json.code).toBe(0);
    const { task } = json.json() as Json;
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(task.artifacts[0].parts[0].text).toBe('echo: hello');
    const text = await a2a(['send', '-a', served.url, 'hello', '--transport', 'HTTP+JSON']);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^Task ID: \S+$/m);
    expect(text.stdout).toMatch(/^Context ID: \S+$/m);
    expect(text.stdout).toContain('State: TASK_STATE_COMPLETED\n');
    expect(text.stdout).toContain('Artifact Content:\necho: hello\n\n');
    // No terminal control sequences (SPEC §9.2).
    expect(text.stdout.includes(String.fromCharCode(27))).toBe(false);
  });

  it('text is concise by default; --verbose adds timestamps and metadata', async () => {
    const concise = await a2a(['send', '-a', served.url, 'hello']);
    expect(concise.stdout).not.toContain('Status Timestamp:');
    const verbose = await a2a(['send', '-a', served.url, 'hello', '--verbose']);
    expect(verbose.stdout).toMatch(/^Status Timestamp: \d{4}-/m);
  });

  it('stops quietly when its reader closes the pipe early (| head)', async () => {
    // An answer far larger than a pipe's buffer: the writes are still pending when head exits.
    // Asynchronously: the agent answering it runs in this process.
    const run = await promisify(execFile)(
      'sh',
      ['-c', `"${process.execPath}" "${BIN}" send -a "$URL" "$BIG" | head -c 20`],
      {
        encoding: 'utf8',
        env: { ...process.env, NODE_OPTIONS: '', URL: served.url, BIG: 'x'.repeat(120_000) },
      },
    );
    expect(run.stdout, run.stderr).toMatch(/^Task ID: /);
    expect(run.stdout).toHaveLength(20);
    expect(run.stderr).not.toMatch(/EPIPE|\n\s+at /);
  });

  it('send --stream -o json: JSON Lines, the terminal event last', async () => {
    const run = await a2a(['send', '-a', served.url, 'words:3', '--stream', '-o', 'json']);
    expect(run.code).toBe(0);
    const lines = run.lines() as Json[];
    expect(lines[0]?.task).toBeDefined();
    expect(lines.filter((l) => l.artifactUpdate)).toHaveLength(3);
    expect(lines.at(-1)?.statusUpdate?.status?.state).toBe('TASK_STATE_COMPLETED');
  });

  it('send --async returns the ids; task get --wait follows the task to completion', async () => {
    const sent = await a2a(['send', '-a', served.url, 'sleep:300', '--async', '-o', 'json']);
    expect(sent.code).toBe(0);
    const { task } = sent.json() as Json;
    expect(task.id).toEqual(expect.any(String));
    expect(task.contextId).toEqual(expect.any(String));
    const got = await a2a([
      'task',
      'get',
      '-a',
      served.url,
      '--wait',
      task.id,
      '--poll-interval',
      '50ms',
      '-o',
      'json',
    ]);
    expect(got.code).toBe(0);
    expect((got.json() as Json).status.state).toBe('TASK_STATE_COMPLETED');
  });

  it('send --max-wait returns a running task (exit 0) that task get --wait then follows', async () => {
    const sent = await a2a(['send', '-a', served.url, 'sleep:1200', '--max-wait', '200ms', '--poll-interval', '50ms']);
    expect(sent.code).toBe(0);
    expect(sent.stdout).toMatch(/^State: TASK_STATE_(WORKING|SUBMITTED)$/m);
    const follow = /^Follow: (a2a task get .*)$/m.exec(sent.stdout)?.[1];
    expect(follow).toBeDefined();
    const id = /^Task ID: (\S+)$/m.exec(sent.stdout)?.[1] as string;
    const got = await a2a(['task', 'get', '-a', served.url, id, '--wait', '--poll-interval', '50ms']);
    expect(got.code).toBe(0);
    expect(got.stdout).toContain('State: TASK_STATE_COMPLETED\n');
  });

  it('input-required exits 0 with a warning and the resume command; --task-id continues it', async () => {
    const asked = await a2a(['send', '-a', served.url, 'ask:Your name?']);
    expect(asked.code).toBe(0);
    expect(asked.stdout).toContain('State: TASK_STATE_INPUT_REQUIRED\n');
    expect(asked.stdout).toMatch(/^Resume: a2a send -a \S+ --task-id \S+ "<reply>"$/m);
    expect(asked.stderr).toContain('TASK_STATE_INPUT_REQUIRED');
    const id = /^Task ID: (\S+)$/m.exec(asked.stdout)?.[1] as string;
    const reply = await a2a(['send', '-a', served.url, '--task-id', id, 'Ada', '-o', 'json']);
    expect(reply.code).toBe(0);
    expect((reply.json() as Json).task.status.state).toBe('TASK_STATE_COMPLETED');
  });

  it('a failed task still exits 0: the outcome is in the state (SPEC §4.6)', async () => {
    const run = await a2a(['send', '-a', served.url, 'fail', '-o', 'json']);
    expect(run.code).toBe(0);
    expect((run.json() as Json).task.status.state).toBe('TASK_STATE_FAILED');
    expect(run.stderr).toContain('TASK_STATE_FAILED');
  });

  it('sends parts in order: --text, --file with --media-type, --data from stdin-free file', async () => {
    const file = join(tmp.dir, 'note.bin');
    await writeFile(file, 'bytes');
    const data = join(tmp.dir, 'data.json');
    await writeFile(data, '{"k":1}');
    const run = await a2a([
      'send',
      '-a',
      served.url,
      '--text',
      'first',
      '--file',
      file,
      '--media-type',
      'application/x-test',
      '--data',
      data,
      '-o',
      'json',
    ]);
    expect(run.code).toBe(0);
    const { task } = run.json() as Json;
    const got = await a2a(['task', 'get', '-a', served.url, task.id, '--history', '5', '-o', 'json']);
    const parts = (got.json() as Json).history[0].parts;
    expect(parts[0]).toEqual({ text: 'first' });
    expect(parts[1]).toMatchObject({ raw: Buffer.from('bytes').toString('base64'), mediaType: 'application/x-test' });
    expect(parts[2]).toEqual({ data: { k: 1 } });
  });

  it('task cancel, task list, task subscribe and push-config CRUD', async () => {
    const sent = await a2a(['send', '-a', served.url, 'sleep:30000', '--async', '-o', 'json']);
    const { task } = sent.json() as Json;
    const created = await a2a([
      'task',
      'push-config',
      'create',
      '-a',
      served.url,
      task.id,
      '--url',
      'http://127.0.0.1:9/hook',
      '--id',
      'h1',
      '-o',
      'json',
    ]);
    expect(created.code).toBe(0);
    expect((created.json() as Json).id).toBe('h1');
    const listed = await a2a(['task', 'push-config', 'list', '-a', served.url, task.id, '-o', 'json']);
    expect((listed.json() as Json).configs.map((c: Json) => c.id)).toEqual(['h1']);
    const one = await a2a(['task', 'push-config', 'get', '-a', served.url, task.id, 'h1']);
    expect(one.stdout).toContain('Config ID: h1\n');
    const deleted = await a2a(['task', 'push-config', 'delete', '-a', served.url, task.id, 'h1']);
    expect(deleted.code).toBe(0);
    const subscription = a2a(['task', 'subscribe', '-a', served.url, task.id, '--stream', '-o', 'json']);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const canceled = await a2a(['task', 'cancel', '-a', served.url, task.id, '-o', 'json']);
    expect(canceled.code, canceled.stdout + canceled.stderr).toBe(0);
    expect((canceled.json() as Json).status.state).toBe('TASK_STATE_CANCELED');
    const events = (await subscription).lines() as Json[];
    expect(events.at(-1)?.statusUpdate?.status?.state).toBe('TASK_STATE_CANCELED');
    const list = await a2a(['task', 'list', '-a', served.url, '--context-id', task.contextId, '-o', 'json']);
    expect(list.code).toBe(0);
    expect((list.json() as Json).tasks.map((t: Json) => t.id)).toEqual([task.id]);
  });

  it('an unknown task: exit 1, the A2A error by name', async () => {
    const json = await a2a(['task', 'get', '-a', served.url, 'nope', '-o', 'json']);
    expect(json.code).toBe(1);
    expect((json.json() as Json).error).toMatchObject({ code: 'TaskNotFoundError', a2aCode: -32001 });
    const text = await a2a(['task', 'get', '-a', served.url, 'nope']);
    expect(text.code).toBe(1);
    stderrIsOneLine(text.stderr);
  });

  it('--timeout expiring: exit 5, A2ACLI_ERR_TIMEOUT', async () => {
    const started = Date.now();
    const run = await a2a(['send', '-a', served.url, 'sleep:5000', '--timeout', '500ms', '-o', 'json']);
    expect(run.code).toBe(5);
    expect((run.json() as Json).error.code).toBe('A2ACLI_ERR_TIMEOUT');
    expect(Date.now() - started).toBeLessThan(4000);
  });

  it('A2ACLI_AGENT_CARD from the environment; 0.3 only when asked for', async () => {
    const run = await a2a(['send', 'hi', '-o', 'json', '--a2a-version', '0.3'], {
      env: { A2ACLI_AGENT_CARD: served.url },
    });
    expect(run.code).toBe(0);
    expect((run.json() as Json).task.status.state).toBe('TASK_STATE_COMPLETED');
  });
});

describe('a2a: credentials', () => {
  it('no credential: exit 4, A2ACLI_ERR_CREDENTIALS_MISSING', async () => {
    const run = await a2a(['send', '-a', secured.url, 'hi', '-o', 'json']);
    expect(run.code).toBe(4);
    expect((run.json() as Json).error.code).toBe('A2ACLI_ERR_CREDENTIALS_MISSING');
  });

  it('a wrong token: exit 4, A2ACLI_ERR_AUTH_FAILED, the token never printed', async () => {
    const run = await a2a(['send', '-a', secured.url, 'hi', '--bearer', 'wrong-token-123', '--debug']);
    expect(run.code).toBe(4);
    expect(run.stderr).toContain('A2ACLI_ERR_AUTH_FAILED');
    expect(run.stderr + run.stdout).not.toContain('wrong-token-123');
  });

  it('a header value from exec: (no shell) and from file:, the token never printed', async () => {
    const file = join(tmp.dir, 'token');
    await writeFile(file, `${TOKEN}\n`);
    const viaExec = await a2a([
      'send',
      '-a',
      secured.url,
      'hi',
      '--bearer',
      `exec:cat ${file}`,
      '--debug',
      '-o',
      'json',
    ]);
    expect(viaExec.code, viaExec.stderr).toBe(0);
    expect((viaExec.json() as Json).task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(viaExec.stderr + viaExec.stdout).not.toContain(TOKEN);
    const viaFile = await a2a([
      'send',
      '-a',
      secured.url,
      'hi',
      '--svc-param',
      `Authorization:file:${file}`,
      '-o',
      'json',
    ]);
    expect(viaFile.code, viaFile.stderr).toBe(0);
    // exec: runs no shell: a pipe is an argument to cat, which fails.
    const noShell = await a2a(['send', '-a', secured.url, 'hi', '--bearer', `exec:cat ${file} | cat`]);
    expect(noShell.code).toBe(4);
    stderrIsOneLine(noShell.stderr);
  });
});

describe('a2a: a refusal that quotes the credential', () => {
  let echo: Server;
  let echoUrl: string;
  beforeAll(async () => {
    // Answers 401 with the token it was sent in the message, as some servers do.
    echo = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(401, { 'content-type': 'application/json' });
        const error = { code: -32600, message: `invalid token ${req.headers.authorization ?? ''}` };
        res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error }));
      });
    });
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    echoUrl = `http://127.0.0.1:${(echo.address() as AddressInfo).port}/a2a`;
  });
  afterAll(() => new Promise<void>((resolve) => echo.close(() => resolve())));

  it('a token read with exec: or file: is redacted from the final error', async () => {
    const file = join(tmp.dir, 'echoed-token');
    await writeFile(file, 'echoed-secret-4711\n');
    for (const source of [`exec:cat ${file}`, `file:${file}`]) {
      const run = await a2a(['send', '-e', echoUrl, 'hi', '--bearer', source]);
      expect(run.code).toBe(4);
      expect(run.stderr).toContain('invalid token Bearer ***');
      expect(run.stderr + run.stdout).not.toContain('echoed-secret-4711');
    }
  });
});

describe('a2a: no agent there', () => {
  let html: Server;
  let htmlUrl: string;
  beforeAll(async () => {
    html = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><html><body>Welcome</body></html>');
    });
    await new Promise<void>((resolve) => html.listen(0, '127.0.0.1', resolve));
    htmlUrl = `http://127.0.0.1:${(html.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => html.close(() => resolve())));

  it('nothing listening: exit 3, one line', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const run = await a2a(['card', 'get', `http://127.0.0.1:${port}`, '--retries', '1']);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain('A2ACLI_ERR_UNREACHABLE');
    stderrIsOneLine(run.stderr);
  });

  it('a server answering HTML: one line saying it is not an agent card', async () => {
    const run = await a2a(['send', '-a', htmlUrl, 'hi']);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/text\/html document that is not JSON.*A2ACLI_ERR_CARD_INVALID/);
    stderrIsOneLine(run.stderr);
  });

  it('not a URL: exit 2', async () => {
    const run = await a2a(['card', 'get', 'http://exa mple', '-o', 'json']);
    expect(run.code).toBe(2);
    expect((run.json() as Json).error.code).toBe('A2ACLI_ERR_USAGE');
  });
});
