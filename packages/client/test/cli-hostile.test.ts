/**
 * The `a2a` CLI against agents and files that mean harm (issue 28), through the real binary as a
 * child process: a file part named `.env` (or another dotfile) must not be saved where the next
 * `a2a` reads it, and a `.env` the user did not write (in a parent directory, owned by someone
 * else, writable by others, or the user's own but found rather than chosen) must not choose the
 * agent, read a local file or run a command.
 */

import { chmod, chown, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { a2a, ensureBuilt } from './cli-process.js';
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
