/**
 * The `a2a` CLI against agents and files that mean harm (issue 28), through the real binary as a
 * child process: a file part named `.env` (or another dotfile) must not be saved where the next
 * `a2a` reads it, and a `.env` the user did not write (in a parent directory, owned by someone
 * else, writable by others, or the user's own but found rather than chosen) must not choose the
 * agent, read a local file or run a command.
 */

import { chmod, chown, lstat, mkdir, readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { a2a, ensureBuilt, type Run } from './cli-process.js';
import { tempDir } from './helpers.js';
import { filePart, type HostileAgent, hostileAgent, taskWith } from './hostile-agent.js';

// biome-ignore lint/suspicious/noExplicitAny: the CLI's JSON output, read member by member in assertions.
type Json = Record<string, any>;

const NOBODY = 65534;
let tmp: Awaited<ReturnType<typeof tempDir>>;
const agents: HostileAgent[] = [];

beforeAll(async () => {
  ensureBuilt();
  tmp = await tempDir();
}, 120_000);

afterAll(async () => {
  await Promise.all(agents.map((agent) => agent.close()));
  await tmp?.remove();
});

async function agent(...args: Parameters<typeof hostileAgent>): Promise<HostileAgent> {
  const started = await hostileAgent(...args);
  agents.push(started);
  return started;
}

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

/** A fresh HOME (so no user file applies unless a test writes one) and an empty directory. */
async function sandbox(name: string): Promise<{ home: string; root: string; env: Record<string, string> }> {
  const root = join(tmp.dir, name);
  const home = join(root, 'home');
  await mkdir(join(home, '.config', 'a2a-cli'), { recursive: true });
  return { home, root, env: { HOME: home } };
}

describe('task download never plants a configuration file (issue 28 item 1)', () => {
  it('a file part named .env is saved under a visible name, and the next a2a run there runs nothing', async () => {
    const { root, env } = await sandbox('plant');
    const marker = join(root, 'ran');
    const work = join(root, 'work');
    await mkdir(work);
    const planted = `A2ACLI_BEARER=exec-shell:touch ${marker}; echo tok\n`;
    const hostile = await agent(
      taskWith([
        filePart('.env', planted),
        filePart('.npmrc', `registry=http://127.0.0.1:9/\n`),
        filePart('.envrc', `touch ${marker}\n`),
        filePart('report.txt', 'the report'),
      ]),
    );

    // The default --dir: the working directory.
    const download = await a2a(['task', 'download', '-a', hostile.url, 'hostile-task', '-o', 'json'], {
      env,
      cwd: work,
    });
    expect(download.code).toBe(0);
    const names = await readdir(work);
    expect(names.filter((name) => name.startsWith('.'))).toEqual([]);
    expect(names.sort()).toEqual(['report.txt', 'result-1.txt', 'result-2.txt', 'result-3.txt']);
    expect(await readFile(join(work, 'report.txt'), 'utf8')).toBe('the report');
    // The planted content is kept, as data, under a name no tool reads.
    expect(await readFile(join(work, 'result-1.txt'), 'utf8')).toBe(planted);
    expect(download.stderr).toContain('Refused the file name ".env" from the agent (it starts with a dot');
    expect(download.stderr).toContain('saving as result-1.txt');
    expect((download.json() as Json).files.map((f: Json) => f.path)).toEqual(
      ['result-1.txt', 'result-2.txt', 'result-3.txt', 'report.txt'].map((name) => join(work, name)),
    );

    // The next command in that directory: no .env is there to load, so no command runs.
    const next = await a2a(['send', '-a', hostile.url, 'hello', '-o', 'json'], { env, cwd: work });
    expect(next.code).toBe(0);
    expect(await exists(marker)).toBe(false);
    const sends = hostile.requests.filter((r) => r.method === 'POST');
    expect(sends.every((r) => r.headers.authorization === undefined)).toBe(true);
  });
});

describe('a .env is read only when the user wrote it and chose it (issue 28 item 2)', () => {
  let recorder: HostileAgent;
  let honest: HostileAgent;
  beforeAll(async () => {
    recorder = await agent(taskWith([{ kind: 'text', text: 'got it' }]), { name: 'Recorder' });
    honest = await agent(taskWith([{ kind: 'text', text: 'hello' }]), { name: 'Honest' });
  });

  /** A secret file of the user's, and a .env naming the recorder and sending that file as a header. */
  async function plantedEnv(root: string): Promise<{ text: string; secret: string; marker: string }> {
    const secret = join(root, 'id_secret');
    await writeFile(secret, 'user-secret-5f2c\n', { mode: 0o600 });
    const marker = join(root, 'ran');
    const text = [
      `A2ACLI_AGENT_CARD=${recorder.url}`,
      `A2ACLI_SVC_PARAM=X-Leak:file:${secret}`,
      `A2ACLI_BEARER=exec-shell:touch ${marker}; echo tok`,
      '',
    ].join('\n');
    return { text, secret, marker };
  }

  const leaked = () => recorder.requests.length;

  it('one in a parent directory (a shared, world-writable one, owned by another user) is never read', async () => {
    const { root, env } = await sandbox('parent');
    const shared = join(root, 'shared');
    await mkdir(join(shared, 'work'), { recursive: true });
    await chmod(shared, 0o1777);
    const { text, marker } = await plantedEnv(root);
    await writeFile(join(shared, '.env'), text, { mode: 0o644 });
    await chown(join(shared, '.env'), NOBODY, NOBODY);
    const before = leaked();

    const run = await a2a(['send', 'hi', '-o', 'json'], { env, cwd: join(shared, 'work') });
    expect(run.code).toBe(2);
    expect((run.json() as Json).error.message).toBe('No agent given.');
    expect(leaked()).toBe(before);
    expect(await exists(marker)).toBe(false);
    const shown = await a2a(['config', 'show', '-o', 'json'], { env, cwd: join(shared, 'work') });
    expect((shown.json() as Json).files.local).toBeNull();
  });

  it('one in the working directory that another user owns, or others can write, is ignored with a warning', async () => {
    const { root, env } = await sandbox('foreign');
    const { text, marker } = await plantedEnv(root);
    const theirs = join(root, 'theirs');
    await mkdir(theirs);
    await writeFile(join(theirs, '.env'), text, { mode: 0o600 });
    await chown(join(theirs, '.env'), NOBODY, NOBODY);
    const writable = join(root, 'writable');
    await mkdir(writable);
    await writeFile(join(writable, '.env'), text);
    await chmod(join(writable, '.env'), 0o666);
    const before = leaked();

    const foreign = await a2a(['send', 'hi', '-o', 'json'], { env, cwd: theirs });
    expect(foreign.code).toBe(2);
    expect(foreign.stderr).toContain(
      `warning: ignored ${join(theirs, '.env')}: it is owned by uid ${NOBODY}, not you (uid ${process.getuid?.()})`,
    );
    const open = await a2a(['send', 'hi', '-o', 'json'], { env, cwd: writable });
    expect(open.code).toBe(2);
    expect(open.stderr).toContain(`warning: ignored ${join(writable, '.env')}: others can write to it (mode 666)`);
    expect(leaked()).toBe(before);
    expect(await exists(marker)).toBe(false);
  });

  it("the user's own .env may set output and literal credentials, not the agent, file: or exec: sources", async () => {
    const { root, env } = await sandbox('own');
    const { text, marker } = await plantedEnv(root);
    const project = join(root, 'project');
    await mkdir(project);
    // A2ACLI_TRUST_LOCAL_CONFIG in the local file itself trusts nothing.
    await writeFile(join(project, '.env'), `${text}A2ACLI_OUTPUT=json\nA2ACLI_TRUST_LOCAL_CONFIG=true\n`, {
      mode: 0o600,
    });
    const before = leaked();
    const honestBefore = honest.requests.length;

    const run = await a2a(['send', '-a', honest.url, 'hi'], { env, cwd: project });
    expect(run.code).toBe(0);
    // A2ACLI_OUTPUT=json from the file applies: one JSON document.
    expect((run.json() as Json).task.id).toBe('hostile-task');
    expect(run.stderr).toContain(`warning: ignored A2ACLI_BEARER, A2ACLI_SVC_PARAM in ${join(project, '.env')}`);
    expect(run.stderr).toContain('--trust-local-config');
    expect(await exists(marker)).toBe(false);
    expect(leaked()).toBe(before);
    const sent = honest.requests.slice(honestBefore);
    expect(sent.length).toBeGreaterThan(0);
    for (const request of sent) {
      expect(request.headers['x-leak']).toBeUndefined();
      expect(request.headers.authorization).toBeUndefined();
    }

    // Without -a: the file does not name the agent.
    const unnamed = await a2a(['send', 'hi'], { env, cwd: project });
    expect(unnamed.code).toBe(2);
    expect(unnamed.stderr).toContain('ignored A2ACLI_AGENT_CARD, A2ACLI_BEARER, A2ACLI_SVC_PARAM');
    expect(leaked()).toBe(before);

    // A literal credential from the file is sent.
    await writeFile(join(project, '.env'), 'A2ACLI_BEARER=literal-token-1234\n', { mode: 0o600 });
    const literal = await a2a(['send', '-a', honest.url, 'hi'], { env, cwd: project });
    expect(literal.code).toBe(0);
    expect(honest.requests.at(-1)?.headers.authorization).toBe('Bearer literal-token-1234');
  });

  it("trusted on the user's word (the flag, or the user file), the local .env sets everything", async () => {
    const { root, env, home } = await sandbox('trusted');
    const { text, marker } = await plantedEnv(root);
    const project = join(root, 'project');
    await mkdir(project);
    await writeFile(join(project, '.env'), text, { mode: 0o600 });

    const before = leaked();
    const flagged = await a2a(['send', 'hi', '--trust-local-config', '-o', 'json'], { env, cwd: project });
    expect(flagged.code).toBe(0);
    expect(await exists(marker)).toBe(true);
    const request = recorder.requests.slice(before).find((r) => r.method === 'POST');
    expect(request?.headers['x-leak']).toBe('user-secret-5f2c');
    expect(request?.headers.authorization).toBe('Bearer tok');

    await writeFile(join(home, '.config', 'a2a-cli', '.env'), 'A2ACLI_TRUST_LOCAL_CONFIG=true\n', { mode: 0o600 });
    const count = leaked();
    const fromUserFile = await a2a(['send', 'hi', '-o', 'json'], { env, cwd: project });
    expect(fromUserFile.code).toBe(0);
    expect(leaked()).toBeGreaterThan(count);
    const shown = await a2a(['config', 'show', '-o', 'json'], { env, cwd: project });
    expect((shown.json() as Json).settings['trust-local-config'].source).toBe(
      `file ${join(home, '.config', 'a2a-cli', '.env')} (A2ACLI_TRUST_LOCAL_CONFIG)`,
    );
  });
});

describe('agent text reaches the terminal inert (issue 28 item 3)', () => {
  // An OSC title, an erase-line, a bare carriage return, a C1 CSI, a bell and a direction override.
  const HOSTILE_TEXT =
    'done\x1b]0;pwned\x07\x1b[2K\rTASK FAILED \x9b31mred \u202eevil\u202c \u2066iso\u2069 tab\there\r\nnext line';
  /** Every character text output must never hold raw. */
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this looks for.
  const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

  it('text escapes every control and bidirectional character but newline and tab; json is byte-exact', async () => {
    const { env } = await sandbox('render');
    const hostile = await agent(taskWith([{ kind: 'text', text: HOSTILE_TEXT }, filePart('a\u202etxt.exe', 'x')]), {
      errorMessage: 'no such method\x1b]0;owned\x07\x1b[2K\r',
    });
    const text = await a2a(['task', 'get', '-a', hostile.url, 'hostile-task'], { env });
    expect(text.code).toBe(0);
    expect(text.stdout).not.toMatch(RAW);
    expect(text.stdout).toContain('State: TASK_STATE_COMPLETED\n');
    expect(text.stdout).toContain(
      'done\\x1b]0;pwned\\x07\\x1b[2K\\x0dTASK FAILED \\x9b31mred \\u202eevil\\u202c \\u2066iso\\u2069 tab\there\nnext line',
    );
    expect(text.stdout).toContain('Artifact Content File: a\\u202etxt.exe, text/plain');

    const json = await a2a(['task', 'get', '-a', hostile.url, 'hostile-task', '-o', 'json'], { env });
    expect((json.json() as Json).artifacts[0].parts[0].text).toBe(HOSTILE_TEXT);

    // stderr too: an agent's error message, and a file name quoted in a warning.
    const failed = await a2a(['task', 'list', '-a', hostile.url], { env });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('no such method\\x1b]0;owned\\x07\\x1b[2K\\x0d');
    expect(failed.stderr).not.toMatch(RAW);
    const dir = join(tmp.dir, 'render', 'out');
    const saved = await a2a(['task', 'download', '-a', hostile.url, 'hostile-task', '--dir', dir], { env });
    expect(saved.code).toBe(0);
    expect(saved.stderr).toContain('Refused the file name "a\\u202etxt.exe"');
    expect(saved.stderr + saved.stdout).not.toMatch(RAW);
  });
});

describe('secrets stay masked in every output (issue 28 item 4)', () => {
  const PUSH_TOKEN = 'push-token-secret-61a0';
  const PUSH_CREDENTIALS = 'auth-credentials-secret-93b4';
  const URL_PASSWORD = 'url-password-secret-7d21';

  it("a push config's token and authentication credentials: not in --debug, text or json", async () => {
    const { env } = await sandbox('push-secrets');
    const hostile = await agent(taskWith([]), {
      pushConfig: {
        taskId: 'hostile-task',
        pushNotificationConfig: {
          id: 'p1',
          url: 'http://127.0.0.1:9/hook',
          token: PUSH_TOKEN,
          authentication: { schemes: ['Bearer'], credentials: PUSH_CREDENTIALS },
        },
      },
    });
    const base = ['task', 'push-config'];
    const runs = [
      await a2a([...base, 'get', '-a', hostile.url, 'hostile-task', 'p1', '--debug'], { env }),
      await a2a([...base, 'get', '-a', hostile.url, 'hostile-task', 'p1', '--debug', '-o', 'json'], { env }),
      await a2a([...base, 'list', '-a', hostile.url, 'hostile-task', '--debug', '-o', 'jsonl'], { env }),
      await a2a(
        [...base, 'create', '-a', hostile.url, 'hostile-task', '--url', 'http://127.0.0.1:9/hook'].concat([
          '--token',
          PUSH_TOKEN,
          '--debug',
          '-o',
          'json',
        ]),
        { env },
      ),
    ];
    for (const run of runs) {
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toContain('[debug] <<< POST');
      expect(run.stdout + run.stderr).not.toContain(PUSH_TOKEN);
      expect(run.stdout + run.stderr).not.toContain(PUSH_CREDENTIALS);
    }
    const [text, json] = runs as [Run, Run];
    expect(text.stdout).toContain('Token: ***');
    expect((json.json() as Json).token).toBe('***');
    expect((json.json() as Json).authentication.credentials).toBe('***');
    expect(json.stderr).toContain('"token":"***"');
  });

  it('a password in the agent URL: not in errors, debug lines or config show', async () => {
    const { env } = await sandbox('url-password');
    const hostile = await agent(taskWith([]));
    const withPassword = hostile.url.replace('http://', `http://user:${URL_PASSWORD}@`);
    const runs = [
      await a2a(['send', '-a', withPassword, 'hi', '--debug'], { env }),
      await a2a(['send', '-a', withPassword, 'hi', '-o', 'json'], { env }),
      await a2a(['send', '-e', `${withPassword}/a2a`, 'hi', '--debug'], { env }),
      await a2a(['config', 'show', '-a', withPassword], { env }),
      await a2a(['config', 'show', '-a', withPassword, '-o', 'json'], { env }),
    ];
    for (const run of runs) expect(run.stdout + run.stderr).not.toContain(URL_PASSWORD);
    expect(runs[3]?.stdout).toContain(`agent-card: ${hostile.url.replace('http://', 'http://user:***@')} [flag]`);
    expect(runs.slice(0, 3).every((run) => run.code !== 0 || run.stdout !== '')).toBe(true);
  });
});

describe('downloads are all or nothing and stay in --dir (issue 28 item 5)', () => {
  it('--force replaces a symlink in the directory rather than writing through it', async () => {
    const { root, env } = await sandbox('symlink');
    const dir = join(root, 'out');
    await mkdir(dir);
    const victim = join(root, 'victim');
    await writeFile(victim, 'the user file');
    await symlink(victim, join(dir, 'report.txt'));
    const hostile = await agent(taskWith([filePart('report.txt', 'from the agent')]));
    const run = await a2a(['task', 'download', '-a', hostile.url, 'hostile-task', '--dir', dir, '--force'], { env });
    expect(run.code).toBe(0);
    expect(await readFile(victim, 'utf8')).toBe('the user file');
    expect((await lstat(join(dir, 'report.txt'))).isFile()).toBe(true);
    expect(await readFile(join(dir, 'report.txt'), 'utf8')).toBe('from the agent');
    expect(await readdir(dir)).toEqual(['report.txt']);
  });

  it('a dangling symlink under a name, without --force: refused before anything is written', async () => {
    const { root, env } = await sandbox('dangling');
    const dir = join(root, 'out');
    await mkdir(dir);
    await symlink(join(root, 'created-outside'), join(dir, 'b.txt'));
    const hostile = await agent(taskWith([filePart('a.txt', 'first'), filePart('b.txt', 'second')]));
    const run = await a2a(['task', 'download', '-a', hostile.url, 'hostile-task', '--dir', dir, '-o', 'json'], {
      env,
    });
    expect(run.code).toBe(2);
    expect((run.json() as Json).error.message).toContain(join(dir, 'b.txt'));
    expect(await readdir(dir)).toEqual(['b.txt']);
    expect(await exists(join(root, 'created-outside'))).toBe(false);
  });

  it('a 300-character name is refused up front (a generated name instead), not after earlier parts', async () => {
    const { root, env } = await sandbox('long');
    const dir = join(root, 'out');
    const long = `${'x'.repeat(300)}.txt`;
    const hostile = await agent(taskWith([filePart('a.txt', 'first'), filePart(long, 'second')]));
    const run = await a2a(['task', 'download', '-a', hostile.url, 'hostile-task', '--dir', dir], { env });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('is longer than 200 bytes); saving as result-2.txt');
    expect((await readdir(dir)).sort()).toEqual(['a.txt', 'result-2.txt']);
    expect(await readFile(join(dir, 'result-2.txt'), 'utf8')).toBe('second');
  });

  it('a part whose URI fails: nothing is written', async () => {
    const { root, env } = await sandbox('uri');
    const dir = join(root, 'out');
    await mkdir(dir);
    const hostile = await agent(
      taskWith([
        filePart('first.txt', 'first'),
        { kind: 'file', file: { uri: 'http://127.0.0.1:9/missing', name: 'second.txt', mimeType: 'text/plain' } },
      ]),
    );
    const run = await a2a(['task', 'download', '-a', hostile.url, 'hostile-task', '--dir', dir, '--retries', '1'], {
      env,
    });
    expect(run.code).toBe(3);
    expect(await readdir(dir)).toEqual([]);
  });
});
