/**
 * The a2a-cli Tier 2 commands and options that apply to us, through the real `a2a` binary against
 * our plugin on a real port: configuration files and `config show` (A2ACLI_CONFIG_002), `task
 * download` (A2ACLI_DOWNLOAD_001), `completion` (A2ACLI_CLI_002), raw bodies on `--debug` with
 * credentials redacted (A2ACLI_OUT_007) and credentials stored by `auth login` (A2ACLI_AUTH_007).
 */

import { execFileSync } from 'node:child_process';
import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { AgentExecutor } from '@fastify-a2a/core';
import { bearerTokens } from 'fastify-a2a';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { a2a, ensureBuilt } from './cli-process.js';
import { type Served, serve, tempDir, testCard } from './helpers.js';

// biome-ignore lint/suspicious/noExplicitAny: the CLI's JSON output, read member by member in assertions.
type Json = Record<string, any>;

const TOKEN = 'tok-77b1e0d2-tier2-secret';
let served: Served;
let secured: Served;
let tmp: Awaited<ReturnType<typeof tempDir>>;

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

/** A fresh HOME (for ~/.config/a2a-cli) and a project directory below it, for one test. */
async function sandbox(name: string): Promise<{ home: string; project: string; userEnv: string }> {
  const home = join(tmp.dir, name, 'home');
  const project = join(tmp.dir, name, 'project', 'sub');
  await mkdir(join(home, '.config', 'a2a-cli'), { recursive: true });
  await mkdir(project, { recursive: true });
  return { home, project, userEnv: join(home, '.config', 'a2a-cli', '.env') };
}

describe('configuration files and config show (A2ACLI_CONFIG_002)', () => {
  it('reads the user file, then the working directory .env, then the environment, then a flag, highest last', async () => {
    const { home, project, userEnv } = await sandbox('precedence');
    await writeFile(userEnv, `A2ACLI_AGENT_CARD=${secured.url}\nA2ACLI_BEARER=${TOKEN}\nA2ACLI_OUTPUT=text\n`, {
      mode: 0o600,
    });
    // The local .env is the working directory's (one in a parent directory is never read).
    await writeFile(join(project, '.env'), '# project settings\nA2ACLI_OUTPUT=json\nA2ACLI_POLL_INTERVAL="3s"\n');
    await writeFile(join(project, '..', '.env'), 'A2ACLI_RETRIES=9\n');
    const env = { HOME: home };

    // Agent and credential from the user file, the output format from the local file.
    const fromFiles = await a2a(['send', 'configured'], { env, cwd: project });
    expect(fromFiles.code).toBe(0);
    expect((fromFiles.json() as Json).task.status.state).toBe('TASK_STATE_COMPLETED');

    const shown = await a2a(['config', 'show'], { env, cwd: project });
    expect(shown.code).toBe(0);
    const settings = (shown.json() as Json).settings;
    expect(settings['agent-card']).toEqual({ value: secured.url, source: `file ${userEnv} (A2ACLI_AGENT_CARD)` });
    expect(settings.output.source).toBe(`file ${join(project, '.env')} (A2ACLI_OUTPUT)`);
    expect(settings.retries).toEqual({ value: '4', source: 'built-in default' });
    expect(settings.output.value).toBe('json');
    expect(settings['poll-interval'].value).toBe('3s');
    expect(settings['a2a-version']).toEqual({ value: '1.0', source: 'built-in default' });
    // The secret is masked, and appears nowhere in the output.
    expect(settings.bearer).toEqual({ value: '***', source: `file ${userEnv} (A2ACLI_BEARER)` });
    expect(shown.stdout).not.toContain(TOKEN);
    expect((shown.json() as Json).files.user).toBe(userEnv);

    // The environment beats both files; a flag beats the environment.
    const fromEnv = await a2a(['config', 'show'], { env: { ...env, A2ACLI_POLL_INTERVAL: '5s' }, cwd: project });
    expect((fromEnv.json() as Json).settings['poll-interval']).toEqual({
      value: '5s',
      source: 'environment A2ACLI_POLL_INTERVAL',
    });
    const fromFlag = await a2a(['config', 'show', '--poll-interval', '7s'], {
      env: { ...env, A2ACLI_POLL_INTERVAL: '5s' },
      cwd: project,
    });
    expect((fromFlag.json() as Json).settings['poll-interval']).toEqual({ value: '7s', source: 'flag' });

    // Text output: one `name: value [source]` line per setting.
    const text = await a2a(['config', 'show', '-o', 'text'], { env, cwd: project });
    expect(text.stdout).toContain(`bearer: *** [file ${userEnv} (A2ACLI_BEARER)]`);
    expect(text.stdout).toContain('output: text [flag]');
    expect(text.stdout).not.toContain(TOKEN);
  });

  it('--config names an agent-specific file in place of the local .env; the user file still applies below it', async () => {
    const { home, project, userEnv } = await sandbox('explicit');
    await writeFile(userEnv, 'A2ACLI_OUTPUT=json\n');
    await writeFile(join(project, '.env'), `A2ACLI_AGENT_CARD=${served.url}\n`);
    const agentFile = join(tmp.dir, 'explicit', 'secured.env');
    await writeFile(agentFile, `A2ACLI_AGENT_CARD=${secured.url}\nA2ACLI_BEARER=${TOKEN}\n`, { mode: 0o600 });
    const run = await a2a(['send', 'scoped', '--config', agentFile], { env: { HOME: home }, cwd: project });
    expect(run.code).toBe(0);
    expect((run.json() as Json).task.status.state).toBe('TASK_STATE_COMPLETED');
    const shown = await a2a(['config', 'show', '--config', agentFile], { env: { HOME: home }, cwd: project });
    const body = shown.json() as Json;
    expect(body.files.local).toBe(agentFile);
    expect(body.settings['agent-card'].value).toBe(secured.url);
    expect(body.settings.output.source).toBe(`file ${userEnv} (A2ACLI_OUTPUT)`);

    const missing = await a2a(['config', 'show', '--config', join(tmp.dir, 'nope.env'), '-o', 'json'], {
      env: { HOME: home },
    });
    expect(missing.code).toBe(2);
    expect((missing.json() as Json).error.code).toBe('A2ACLI_ERR_USAGE');
  });

  it('warns when a file holding a credential is readable by others, and --stream never comes from a file', async () => {
    const { home, project } = await sandbox('modes');
    const local = join(project, '.env');
    await writeFile(local, `A2ACLI_BEARER=${TOKEN}\nA2ACLI_STREAM=true\n`);
    await chmod(local, 0o644);
    const run = await a2a(['send', '-a', served.url, 'mode check', '-o', 'json'], {
      env: { HOME: home },
      cwd: project,
    });
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(`warning: ${local} holds a credential and others can read it: chmod 600 ${local}`);
    // One document, not JSON Lines: A2ACLI_STREAM in a file is ignored (§9.3).
    expect((run.json() as Json).task.status.state).toBe('TASK_STATE_COMPLETED');
    await chmod(local, 0o600);
    const quiet = await a2a(['send', '-a', served.url, 'mode check', '-o', 'json'], {
      env: { HOME: home },
      cwd: project,
    });
    expect(quiet.stderr).toBe('');
  });
});

describe('task download (A2ACLI_DOWNLOAD_001)', () => {
  let filesAgent: Served;
  let fileServer: Server;
  const PDF = Buffer.from('%PDF-1.4 not really a pdf\n');
  const BINARY = Buffer.from([0, 1, 2, 3, 250, 251, 252, 253]);
  beforeAll(async () => {
    fileServer = createServer((req, res) => {
      if (req.url !== '/files/report.pdf' || req.headers.authorization !== undefined) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/pdf' }).end(PDF);
    });
    await new Promise<void>((resolve) => fileServer.listen(0, '127.0.0.1', resolve));
    const fileUrl = `http://127.0.0.1:${(fileServer.address() as AddressInfo).port}/files/report.pdf`;
    const executor: AgentExecutor = {
      async execute(turn) {
        await turn.artifact({
          artifactId: 'outputs',
          name: 'outputs',
          parts: [
            { kind: 'text', text: 'The summary.' },
            { kind: 'data', data: { total: 3, items: ['a', 'b'] } },
            {
              kind: 'file',
              file: { bytes: BINARY.toString('base64'), name: 'blob.bin', mimeType: 'application/octet-stream' },
            },
            { kind: 'file', file: { uri: fileUrl, name: 'report.pdf', mimeType: 'application/pdf' } },
            {
              kind: 'file',
              file: { bytes: Buffer.from('escaped').toString('base64'), name: '../escape.txt', mimeType: 'text/plain' },
            },
            { kind: 'file', file: { bytes: Buffer.from('unnamed').toString('base64'), mimeType: 'image/png' } },
          ],
        });
        await turn.complete();
      },
    };
    filesAgent = await serve('memory:', { executor, authenticate: bearerTokens({ [TOKEN]: 'alice' }) });
  }, 60_000);
  afterAll(async () => {
    await filesAgent?.close();
    await new Promise<void>((resolve) => fileServer?.close(() => resolve()));
  });

  it('saves each part as a file, refuses a name that is a path, and overwrites only with --force', async () => {
    const auth = ['-a', filesAgent.url, '--bearer', TOKEN];
    const sent = await a2a(['send', ...auth, 'make files', '-o', 'json']);
    expect(sent.code).toBe(0);
    const id = (sent.json() as Json).task.id as string;
    const dir = join(tmp.dir, 'download', 'out');

    const run = await a2a(['task', 'download', ...auth, id, '--dir', dir, '-o', 'json']);
    expect(run.code).toBe(0);
    const body = run.json() as Json;
    expect(body.taskId).toBe(id);
    expect(body.state).toBe('TASK_STATE_COMPLETED');
    expect((body.files as Json[]).map((f) => f.path)).toEqual([
      join(dir, 'outputs-1.txt'),
      join(dir, 'outputs-2.json'),
      join(dir, 'blob.bin'),
      join(dir, 'report.pdf'),
      join(dir, 'outputs-5.txt'),
      join(dir, 'outputs-6.png'),
    ]);
    expect(await readFile(join(dir, 'outputs-1.txt'), 'utf8')).toBe('The summary.');
    expect(JSON.parse(await readFile(join(dir, 'outputs-2.json'), 'utf8'))).toEqual({ total: 3, items: ['a', 'b'] });
    expect(await readFile(join(dir, 'blob.bin'))).toEqual(BINARY);
    // Fetched from its URI, without the agent's bearer token (the file server 404s one that has it).
    expect(await readFile(join(dir, 'report.pdf'))).toEqual(PDF);
    // `../escape.txt` stayed inside the directory under a generated name, with a warning.
    expect(await readFile(join(dir, 'outputs-5.txt'), 'utf8')).toBe('escaped');
    await expect(stat(join(dir, '..', 'escape.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(run.stderr).toContain('Refused the file name "../escape.txt"');
    expect(run.stderr).not.toContain(TOKEN);

    // Again into the same directory: nothing is overwritten without --force.
    await writeFile(join(dir, 'blob.bin'), 'changed by the user');
    const again = await a2a(['task', 'download', ...auth, id, '--dir', dir, '-o', 'json']);
    expect(again.code).toBe(2);
    expect((again.json() as Json).error.code).toBe('A2ACLI_ERR_USAGE');
    expect((again.json() as Json).error.hint).toContain('--force');
    expect(await readFile(join(dir, 'blob.bin'), 'utf8')).toBe('changed by the user');
    const forced = await a2a(['task', 'download', ...auth, id, '--dir', dir, '--force']);
    expect(forced.code).toBe(0);
    expect(forced.stdout).toContain(`Task ID: ${id}`);
    expect(forced.stdout).toContain(`Saved: ${join(dir, 'blob.bin')} (application/octet-stream, 8 bytes)`);
    expect(await readFile(join(dir, 'blob.bin'))).toEqual(BINARY);
  });
});

describe('completion (A2ACLI_CLI_002)', () => {
  it('bash: completes commands, subcommands and each command’s flags from the command table', async () => {
    const script = await a2a(['completion', 'bash']);
    expect(script.code).toBe(0);
    const file = join(tmp.dir, 'a2a.bash');
    await writeFile(file, script.stdout);
    const complete = (...words: string[]) =>
      execFileSync(
        'bash',
        [
          '-c',
          `source "$0"; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _a2a; echo "\${COMPREPLY[*]}"`,
          file,
        ],
        { encoding: 'utf8' },
      ).trim();
    expect(complete('a2a', '').split(' ')).toEqual(
      expect.arrayContaining(['card', 'send', 'task', 'config', 'auth', 'completion', 'help']),
    );
    expect(complete('a2a', 'task', '').split(' ')).toEqual(
      expect.arrayContaining(['get', 'cancel', 'list', 'subscribe', 'download', 'push-config']),
    );
    expect(complete('a2a', 'task', 'push-config', '')).toBe('create get list delete');
    expect(complete('a2a', 'task', 'download', '--f')).toBe('--force');
    expect(complete('a2a', 'send', '--str')).toBe('--stream');
    expect(complete('a2a', 'config', 's')).toBe('show');
  });

  it('zsh and fish: every command word and option appears; an unknown shell is a usage error', async () => {
    const zsh = await a2a(['completion', 'zsh']);
    expect(zsh.stdout.startsWith('#compdef a2a\n')).toBe(true);
    expect(zsh.stdout).toContain('bashcompinit');
    expect(zsh.stdout).toContain('complete -o default -F _a2a a2a');
    const fish = await a2a(['completion', 'fish']);
    expect(fish.code).toBe(0);
    expect(fish.stdout).toContain("complete -c a2a -n '__fish_use_subcommand' -a 'send'");
    expect(fish.stdout).toContain("-a 'download'");
    expect(fish.stdout).toContain("complete -c a2a -n '__fish_seen_subcommand_from download' -l force");
    expect(fish.stdout).toContain('complete -c a2a -l agent-card -s a -r');
    const bad = await a2a(['completion', 'tcsh', '-o', 'json']);
    expect(bad.code).toBe(2);
    expect((bad.json() as Json).error.code).toBe('A2ACLI_ERR_USAGE');
  });
});

describe('--debug shows the raw bodies, never a credential (A2ACLI_OUT_007)', () => {
  it('a blocking send: request headers and body, response body; the bearer token is *** throughout', async () => {
    const run = await a2a(['send', '-a', secured.url, 'debug me', '--bearer', TOKEN, '--debug', '-o', 'json']);
    expect(run.code).toBe(0);
    const taskId = (run.json() as Json).task.id as string;
    expect(run.stderr).toMatch(/\[debug\] >>> POST \S+ headers: .*authorization: \*\*\*/);
    expect(run.stderr).toMatch(/\[debug\] >>> POST \S+ body: \{.*"debug me"/);
    expect(run.stderr).toContain('[debug] <<< POST');
    expect(run.stderr).toContain(taskId);
    expect(run.stderr).not.toContain(TOKEN);
    expect(run.stdout).not.toContain(TOKEN);
  });

  it('a stream: each raw event as it arrives, the token redacted even when the agent echoes it', async () => {
    const run = await a2a([
      'send',
      '-a',
      secured.url,
      `words:2 ${TOKEN}`,
      '--bearer',
      TOKEN,
      '--stream',
      '--debug',
      '-o',
      'json',
    ]);
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/\[debug\] <<< POST \S+ stream: .*data:/);
    expect(run.stderr).toContain('***');
    expect(run.stderr).not.toContain(TOKEN);
  });
});

describe('auth login / status / logout (A2ACLI_AUTH_007)', () => {
  it('stores a token per agent in a 0600 file, sends it to that agent only, and forgets it on logout', async () => {
    // A home without ~/.config/a2a-cli yet: login creates the directory, private to the user.
    const home = join(tmp.dir, 'auth', 'home');
    await mkdir(home, { recursive: true });
    const env = { HOME: home };
    const login = await a2a(['auth', 'login', '-a', secured.url, '-o', 'json'], {
      env: { ...env, A2ACLI_BEARER: TOKEN },
    });
    expect(login.code).toBe(0);
    const stored = join(home, '.config', 'a2a-cli', 'credentials.json');
    expect((login.json() as Json).file).toBe(stored);
    expect((await stat(stored)).mode & 0o777).toBe(0o600);
    expect((await stat(join(home, '.config', 'a2a-cli'))).mode & 0o077).toBe(0);
    expect(login.stdout).not.toContain(TOKEN);

    // Attached automatically: the same agent, named with a trailing slash, needs no --bearer.
    const sent = await a2a(['send', '-a', `${secured.url}/`, 'remembered', '-o', 'json', '--debug'], { env });
    expect(sent.code).toBe(0);
    expect((sent.json() as Json).task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(sent.stderr).toContain('using the credential stored by `a2a auth login`');
    expect(sent.stderr).not.toContain(TOKEN);
    // Another agent does not get it.
    const other = await a2a(['send', '-a', served.url, 'other', '--debug', '-o', 'json'], { env });
    expect(other.code).toBe(0);
    expect(other.stderr).not.toContain('authorization');

    const status = await a2a(['auth', 'status'], { env });
    expect(status.stdout).toContain(`Agent: ${secured.url} bearer ***`);
    expect(status.stdout).not.toContain(TOKEN);
    const shown = await a2a(['config', 'show', '-a', secured.url, '-o', 'json'], { env });
    expect((shown.json() as Json).storedCredential).toEqual({
      kind: 'bearer',
      value: '***',
      source: `auth login ${stored}`,
    });

    const logout = await a2a(['auth', 'logout', '-a', secured.url, '-o', 'json'], { env });
    expect((logout.json() as Json).removed).toBe(true);
    const refused = await a2a(['send', '-a', secured.url, 'forgotten', '-o', 'json'], { env });
    expect(refused.code).toBe(4);
    expect((refused.json() as Json).error.code).toBe('A2ACLI_ERR_CREDENTIALS_MISSING');
  });

  it('a wrong stored token is an authentication failure (exit 4), and login needs exactly one credential', async () => {
    const { home } = await sandbox('auth-wrong');
    const env = { HOME: home };
    await a2a(['auth', 'login', '-a', secured.url, '--bearer', 'wrong-token-9'], { env });
    const refused = await a2a(['send', '-a', secured.url, 'wrong', '-o', 'json'], { env });
    expect(refused.code).toBe(4);
    expect((refused.json() as Json).error.code).toBe('A2ACLI_ERR_AUTH_FAILED');
    const neither = await a2a(['auth', 'login', '-a', secured.url, '-o', 'json'], { env });
    expect(neither.code).toBe(2);
    expect((neither.json() as Json).error.code).toBe('A2ACLI_ERR_USAGE');
  });
});

describe('conformance (A2ACLI_CONFORM_001)', () => {
  it('runs every check on both bindings of a conformant agent: all pass', async () => {
    const run = await a2a(['conformance', '-a', served.url, '-o', 'json'], { timeoutMs: 60_000 });
    expect(run.code).toBe(0);
    const body = run.json() as Json;
    const names = ['send', 'get', 'get-unknown', 'same-context', 'list', 'cancel-final', 'stream'];
    expect((body.checks as Json[]).map((c) => `${c.binding} ${c.check}`)).toEqual([
      ...names.map((n) => `JSONRPC ${n}`),
      ...names.map((n) => `HTTP+JSON ${n}`),
    ]);
    expect((body.checks as Json[]).filter((c) => c.outcome !== 'pass')).toEqual([]);
    expect(body).toMatchObject({ passed: 14, failed: 0, skipped: 0, version: '1.0' });
    const cancel = (body.checks as Json[]).find((c) => c.check === 'cancel-final');
    expect(cancel?.detail).toBe('TaskNotCancelableError, as required');
    expect(run.stderr).toBe('');
  });

  it('an agent that fails a rule: the check fails with what it saw, a warning on stderr, exit 0', async () => {
    // An agent that answers every message in a context of its own: §3.4.1 broken on purpose.
    const executor: AgentExecutor = {
      async execute(turn) {
        await turn.complete('done');
      },
    };
    const contextless = await serve('memory:', { executor });
    const proxy = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      let body = Buffer.concat(chunks).toString('utf8');
      // Drop the contextId from each message on its way in, so the agent starts a new context.
      body = body.replace(/"contextId":"[^"]*",?/g, '').replace(/,}/g, '}');
      const upstream = await fetch(`${contextless.url}${req.url}`, {
        method: req.method,
        headers: Object.fromEntries(
          Object.entries(req.headers).filter(([k]) => k !== 'content-length' && k !== 'host'),
        ) as Record<string, string>,
        body: req.method === 'GET' ? undefined : body,
      });
      // The card's interface URLs point back at this proxy.
      const answer = (await upstream.text()).split(contextless.url).join(proxyUrl);
      res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' });
      res.end(answer);
    });
    let proxyUrl = '';
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    try {
      const url = proxyUrl;
      const run = await a2a(['conformance', '-a', url, '--transport', 'JSONRPC', '-o', 'text'], { timeoutMs: 60_000 });
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(
        /^JSONRPC same-context: FAIL \(§3\.4\.1 contextId\): a message sent in context \S+ was answered in \S+$/m,
      );
      expect(run.stdout).toMatch(/^JSONRPC send: PASS/m);
      expect(run.stderr).toMatch(/warning: \d+ conformance check\(s\) failed\./);
    } finally {
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
      await contextless.close();
    }
  });
});

describe('auth login with OAuth (A2ACLI_AUTH_005, A2ACLI_AUTH_006)', () => {
  const CLIENT_ID = 'cli-client';
  const CLIENT_SECRET = 'cs-5d0e9a7b-very-secret';
  const SERVICE_TOKEN = 'at-service-1f2e3d4c5b';
  const USER_TOKEN = 'at-user-9a8b7c6d5e';
  let identity: Server;
  let oauthAgent: Served;
  /** What the identity provider saw: grants and how often the device token was polled. */
  const seen = { devicePolls: 0, basic: '' };

  beforeAll(async () => {
    // A minimal identity provider on this machine: RFC 6749 §4.4 and RFC 8628 endpoints.
    identity = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      const reply = (status: number, body: Json) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (req.url === '/device') {
        if (form.get('client_id') !== CLIENT_ID) return reply(400, { error: 'invalid_client' });
        return reply(200, {
          device_code: 'dev-code-1',
          user_code: 'WDJB-MJHT',
          verification_uri: 'https://idp.example/device',
          expires_in: 60,
          interval: 1,
        });
      }
      if (req.url !== '/token') return reply(404, { error: 'not_found' });
      if (form.get('grant_type') === 'client_credentials') {
        seen.basic = req.headers.authorization ?? '';
        const expected = `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`;
        if (req.headers.authorization !== expected) {
          return reply(401, { error: 'invalid_client', error_description: 'bad client credentials' });
        }
        return reply(200, { access_token: SERVICE_TOKEN, token_type: 'Bearer', expires_in: 3600 });
      }
      if (form.get('grant_type') === 'urn:ietf:params:oauth:grant-type:device_code') {
        seen.devicePolls++;
        if (form.get('device_code') !== 'dev-code-1') return reply(400, { error: 'invalid_grant' });
        // The user approves after the first poll.
        if (seen.devicePolls === 1) return reply(400, { error: 'authorization_pending' });
        return reply(200, { access_token: USER_TOKEN, token_type: 'Bearer' });
      }
      return reply(400, { error: 'unsupported_grant_type' });
    });
    await new Promise<void>((resolve) => identity.listen(0, '127.0.0.1', resolve));
    const idp = `http://127.0.0.1:${(identity.address() as AddressInfo).port}`;
    oauthAgent = await serve('memory:', {
      agentCard: {
        ...testCard,
        securitySchemes: {
          oauth: {
            type: 'oauth2',
            flows: {
              clientCredentials: { tokenUrl: `${idp}/token`, scopes: {} },
              deviceCode: { deviceAuthorizationUrl: `${idp}/device`, tokenUrl: `${idp}/token`, scopes: {} },
            },
          },
        },
        security: [{ oauth: [] }],
      },
      authenticate: bearerTokens({ [SERVICE_TOKEN]: 'service', [USER_TOKEN]: 'user' }),
    });
  }, 60_000);
  afterAll(async () => {
    await oauthAgent?.close();
    await new Promise<void>((resolve) => identity?.close(() => resolve()));
  });

  it('client credentials: the token from the card’s token endpoint is stored and sent; the secret never printed', async () => {
    const home = join(tmp.dir, 'oauth-cc');
    await mkdir(home, { recursive: true });
    const env = { HOME: home, A2ACLI_CLIENT_SECRET: CLIENT_SECRET };
    const login = await a2a(
      ['auth', 'login', '-a', oauthAgent.url, '--client-id', CLIENT_ID, '--debug', '-o', 'json'],
      { env },
    );
    expect(login.code).toBe(0);
    const body = login.json() as Json;
    expect(body).toMatchObject({ agent: oauthAgent.url, stored: 'bearer', flow: 'client-credentials' });
    expect(Date.parse(body.expiresAt) - Date.now()).toBeGreaterThan(3500_000);
    expect(seen.basic).toBe(`Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`);
    for (const secret of [CLIENT_SECRET, SERVICE_TOKEN]) {
      expect(login.stdout).not.toContain(secret);
      expect(login.stderr).not.toContain(secret);
    }
    const stored = JSON.parse(await readFile(join(home, '.config', 'a2a-cli', 'credentials.json'), 'utf8')) as Json;
    expect(stored.agents[oauthAgent.url].bearer).toBe(SERVICE_TOKEN);
    const sent = await a2a(['send', '-a', oauthAgent.url, 'with oauth', '-o', 'json'], { env: { HOME: home } });
    expect(sent.code).toBe(0);
    expect((sent.json() as Json).task.status.state).toBe('TASK_STATE_COMPLETED');

    const wrong = await a2a(['auth', 'login', '-a', oauthAgent.url, '--client-id', CLIENT_ID, '-o', 'json'], {
      env: { HOME: home, A2ACLI_CLIENT_SECRET: 'not-the-secret' },
    });
    expect(wrong.code).toBe(4);
    expect((wrong.json() as Json).error.code).toBe('A2ACLI_ERR_AUTH_FAILED');
    expect((wrong.json() as Json).error.message).toContain('invalid_client: bad client credentials');
    expect(wrong.stdout).not.toContain('not-the-secret');
  });

  it('device code: prints where to enter the code, polls until approved, stores the token', async () => {
    const home = join(tmp.dir, 'oauth-device');
    await mkdir(home, { recursive: true });
    const login = await a2a(
      ['auth', 'login', '-a', oauthAgent.url, '--client-id', CLIENT_ID, '--flow', 'device-code', '-o', 'json'],
      {
        env: { HOME: home },
      },
    );
    expect(login.code).toBe(0);
    expect(login.stderr).toContain('To sign in, open https://idp.example/device and enter the code WDJB-MJHT.');
    expect(seen.devicePolls).toBe(2);
    expect(login.json()).toMatchObject({ stored: 'bearer', flow: 'device-code' });
    expect(login.stdout).not.toContain(USER_TOKEN);
    const sent = await a2a(['send', '-a', oauthAgent.url, 'as the user', '-o', 'json'], { env: { HOME: home } });
    expect(sent.code).toBe(0);
    const status = await a2a(['auth', 'status'], { env: { HOME: home } });
    expect(status.stdout).toContain(`Agent: ${oauthAgent.url} bearer *** (device-code, stored `);
  });
});
