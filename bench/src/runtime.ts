/**
 * `npm run bench:runtime`: the CPU one blocking message/send costs on each store, straight through
 * the A2ARuntime (no HTTP, no load generator), so a store's own cost can be seen apart from
 * Fastify's. Each store runs in its own child (compiled like the bench servers); 64 concurrent
 * senders for RUNTIME_DURATION_MS (4000) after a 1 s warm-up. "Rest of the machine" is the machine's
 * busy CPU over the window minus the child's: with Postgres, mostly the Postgres server.
 * Then, in this process, the promises one blocking send creates on the memory store, counted with
 * an async hook and grouped by where they are made (issues 22 and 18). Writes bench/RUNTIME.md.
 */

import { createHook } from 'node:async_hooks';
import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { A2ARuntime, callContext, RuntimeService } from '@fastify-a2a/core';
import { MemoryStore } from '@fastify-a2a/store-memory';
import { echoAgent } from '../../examples/demo/src/agents.js';
import { compiledEntry } from './lib/child.js';
import { BENCH_DIR, machineInfo, machineLine, REPO_DIR, repoInfo, writeFile } from './lib/env.js';

interface Measured {
  kind: string;
  createTaskBeforeRun: boolean;
  pushOn: boolean;
  sends: number;
  wallMs: number;
  userMs: number;
  systemMs: number;
  machineBusyMs: number;
}

const stores = (process.env.RUNTIME_STORES ?? 'memory,sqlite,postgres').split(',');
const entry = await compiledEntry('runtime-only.ts');
const results: Measured[] = [];
/**
 * Each store with the task written before the agent runs (the path before issue 13), with the
 * default, and with the default and push notifications on (the demo as shipped).
 */
const cases = stores.flatMap((kind) => [
  { kind, createTaskBeforeRun: true, pushOn: false },
  { kind, createTaskBeforeRun: false, pushOn: false },
  { kind, createTaskBeforeRun: false, pushOn: true },
]);
for (const { kind, createTaskBeforeRun, pushOn } of cases) {
  const measured = await new Promise<Measured>((resolve, reject) => {
    const child = fork(entry, [], {
      env: {
        ...process.env,
        RUNTIME_STORE: kind,
        RUNTIME_CREATE_TASK_BEFORE_RUN: createTaskBeforeRun ? '1' : '0',
        RUNTIME_PUSH: pushOn ? '1' : '0',
      },
      stdio: 'inherit',
    });
    let result: Measured | undefined;
    child.on('message', (message: Measured) => {
      result = message;
    });
    child.on('exit', (code) =>
      result ? resolve(result) : reject(new Error(`${kind}: the child exited with code ${code} before reporting`)),
    );
  });
  results.push(measured);
  const per = (ms: number) => (ms / measured.sends).toFixed(3);
  console.log(
    `${label(measured)}: ${((measured.sends * 1000) / measured.wallMs).toFixed(0)} sends/s; per send: node ${per(measured.userMs + measured.systemMs)} ms CPU (user ${per(measured.userMs)}, system ${per(measured.systemMs)}), rest of the machine ${per(measured.machineBusyMs - measured.userMs - measured.systemMs)} ms`,
  );
}

function label(m: Measured): string {
  if (m.createTaskBeforeRun) return `${m.kind}, task written before the run`;
  return m.pushOn ? `${m.kind}, push on` : m.kind;
}

interface PromiseCount {
  /** Promises per send, the fewest of a few sends (anything else the process does only adds). */
  perSend: number;
  /** One send's promises by the first two frames of this repository's code that made them, most first. */
  bySite: [site: string, count: number][];
}

/**
 * The promises one blocking send makes through the runtime's service (`RuntimeService.sendMessage`,
 * what dispatch calls) on a memory store, the await of the send included: what AsyncLocalStorage's
 * promise hooks run for once tracing is on. Counted with an async hook's `init` (type PROMISE),
 * which also sees each `await`'s throwaway promise, as the promise hooks do.
 */
async function countPromises(): Promise<PromiseCount> {
  const runtime = new A2ARuntime({ store: new MemoryStore(), executor: echoAgent, retention: false });
  const service = new RuntimeService({ runtime });
  const ctx = callContext();
  const send = () =>
    service.sendMessage(
      {
        message: {
          kind: 'message',
          role: 'user',
          messageId: randomUUID(),
          parts: [{ kind: 'text', text: 'hello benchmark world' }],
        },
      },
      ctx,
    );
  for (let i = 0; i < 200; i++) await send(); // warm-up
  let created = 0;
  let sites: Map<string, number> | undefined;
  const hook = createHook({
    init(_asyncId, type) {
      if (type !== 'PROMISE') return;
      created++;
      if (sites !== undefined) {
        const site = siteOf(new Error().stack ?? '');
        sites.set(site, (sites.get(site) ?? 0) + 1);
      }
    },
  });
  const counts: number[] = [];
  for (let i = 0; i < 5; i++) {
    created = 0;
    hook.enable();
    await send();
    hook.disable();
    counts.push(created);
  }
  sites = new Map();
  const stackTraceLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = 40;
  hook.enable();
  await send();
  hook.disable();
  Error.stackTraceLimit = stackTraceLimit;
  await runtime.close();
  return { perSend: Math.min(...counts), bySite: [...sites].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])) };
}

/** `file:line (function)` of the first two frames in this repository's code (not this file), innermost first. */
function siteOf(stack: string): string {
  const frames = stack
    .split('\n')
    .slice(1)
    .map((line) => /at (?:(.*?) \()?(.*):(\d+):\d+\)?$/.exec(line.trim()))
    .filter((match): match is RegExpExecArray => match !== null && match[2]?.startsWith(REPO_DIR) === true)
    .filter((match) => !match[2]?.includes('/node_modules/') && !match[2]?.endsWith('bench/src/runtime.ts'))
    .slice(0, 2)
    .map(([, fn, file, line]) => `${(file ?? '').slice(REPO_DIR.length + 1)}:${line}${fn ? ` (${fn})` : ''}`);
  return frames.length === 0 ? "(no frame of this repository: the send's own await)" : frames.join(' ← ');
}

const promises = await countPromises();
console.log(`promises per blocking send (memory, through RuntimeService): ${promises.perSend}`);

const row = (m: Measured): string => {
  const per = (ms: number) => (ms / m.sends).toFixed(3);
  const rest = Math.max(0, m.machineBusyMs - m.userMs - m.systemMs);
  return `| ${label(m)} | ${((m.sends * 1000) / m.wallMs).toFixed(0)} | ${per(m.userMs)} | ${per(m.systemMs)} | ${per(rest)} | ${per(m.machineBusyMs)} |`;
};
const repo = repoInfo();
writeFile(
  join(BENCH_DIR, 'RUNTIME.md'),
  [
    '# CPU per message/send by store, without HTTP',
    '',
    'Generated by `npm run bench:runtime` (bench/src/runtime.ts); do not edit by hand.',
    '',
    `- Date: ${new Date().toISOString()}; code: commit ${repo.commit}${repo.dirtyPaths.length > 0 ? ' with uncommitted changes' : ''}`,
    `- Machine: ${machineLine(machineInfo())}`,
    '- Blocking `message/send` through `A2ARuntime.sendMessage` with the demo echo agent ("hello benchmark world": the task, a working status, 5 artifact chunks, completed), 64 concurrent senders, one store per child process, after a 1 s warm-up.',
    '- Each store three ways: "task written before the run" is `createTaskBeforeRun: true` (a commit with the task and its queue slot, then one with the agent\'s updates that frees the slot: how every send was written before issue 13); the plain row is the default (a new task in a new context written with the agent\'s first updates: one commit, no slot). bench/WRITES.md counts what each writes.',
    '- "push on" is the plain row with push notifications on (`push: {}`, the defaults, as the demo ships them): the delivery job polls the store every 250 ms; no send carries a push config.',
    '- The machine is shared with other work that comes and goes: two runs of one build a minute apart differ by up to 2× in sends/s, less in node CPU per send. Compare builds in alternating runs (A B A B), not against a table from another time.',
    '- "Rest of the machine" is the machine\'s busy CPU over the window minus the child\'s own: with Postgres it is mostly the Postgres server; other work on a shared machine shows up there too.',
    '',
    '| store | sends/s | node user ms/send | node system ms/send | rest of the machine ms/send | machine total ms/send |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
    ...results.map(row),
    '',
    '## Promises per blocking send',
    '',
    "The promises one blocking `message/send` of the echo agent (as above: 7 updates, one commit) creates through `RuntimeService.sendMessage` on a memory store, after a warm-up, counted in the parent process with an async hook (`init`, type `PROMISE`; it sees each `await`'s throwaway promise too, as Node 20's promise hooks do once OpenTelemetry's AsyncLocalStorage context is in use, bench/TELEMETRY.md). The send's own `await` is included; HTTP is not. `packages/core/test/runtime/promises-per-send.test.ts` holds the count under a bound.",
    '',
    `- Promises per send: **${promises.perSend}** (the fewest of 5 sends)`,
    '',
    "Where one send's promises are made (the first two frames of this repository's code, innermost first; line numbers of the code measured):",
    '',
    '| promises | made at |',
    '| ---: | --- |',
    ...promises.bySite.map(([site, count]) => `| ${count} | \`${site}\` |`),
    '',
  ].join('\n'),
);
console.log('wrote bench/RUNTIME.md');
