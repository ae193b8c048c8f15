/**
 * `a2a conformance` (a2a-cli A2ACLI_CONFORM_001): a smoke check of a live agent, run on every
 * binding its card offers that this CLI speaks. Each check is one A2A 1.0 rule a client relies on,
 * named with its section; the outcome is pass, fail or skip (a capability the card does not
 * declare). These are our checks of the protocol's rules, not the A2A TCK itself (a separate
 * Python suite): a smoke check, as the spec asks, before running the TCK in earnest.
 *
 * The exit status says whether the checks ran (§4.6): a failed check is the agent's outcome,
 * reported in the output and warned about on stderr, and exits 0 like a failed task does.
 */

import { randomUUID } from 'node:crypto';
import { isFinalState, type Message, type Task } from '@fastify-a2a/core/protocol';
import { endpointsOf } from '../card.js';
import type { A2AClient } from '../client.js';
import { A2AClientError } from '../errors.js';
import { type Context, client } from './commands.js';
import { binding, list, type Parsed } from './options.js';

type Outcome = 'pass' | 'fail' | 'skip';

interface CheckResult {
  binding: string;
  check: string;
  /** The A2A 1.0 section the check reads. */
  section: string;
  outcome: Outcome;
  detail: string;
}

/** A check's body: returns its detail on a pass, throws `Skip` or anything else (a fail). */
type Check = (state: { agent: A2AClient; task?: Task | undefined }) => Promise<string>;

class Skip extends Error {}

const errorName = (error: unknown) =>
  A2AClientError.is(error) ? (error.a2aName ?? error.kind) : error instanceof Error ? error.message : String(error);

function expectError(error: unknown, name: string): string {
  if (A2AClientError.is(error) && error.a2aName === name) return `${name}, as required`;
  throw new Error(`expected ${name}, got ${errorName(error)}`);
}

const needTask = (task: Task | undefined): Task => {
  if (task === undefined) throw new Skip('the send check produced no task');
  return task;
};

function checks(text: string): [name: string, section: string, run: Check][] {
  return [
    [
      'send',
      '§3.1.1 SendMessage',
      async (state) => {
        const sent = await state.agent.send({ text });
        const result: Task | Message = sent.result;
        if (result.kind === 'message') return 'answered with a Message (no task to check further)';
        if (!result.id || !result.contextId || !result.status?.state) {
          throw new Error('the Task lacks an id, a contextId or a status state');
        }
        state.task = result;
        return `Task ${result.id} in ${result.status.state}`;
      },
    ],
    [
      'get',
      '§3.1.3 GetTask',
      async (state) => {
        const task = needTask(state.task);
        const got = await state.agent.getTask(task.id);
        if (got.id !== task.id || got.contextId !== task.contextId) {
          throw new Error(`GetTask answered task ${got.id} in context ${got.contextId}`);
        }
        return 'the same task id and contextId';
      },
    ],
    [
      'get-unknown',
      '§3.3.2 TaskNotFoundError',
      async (state) => {
        try {
          await state.agent.getTask(`conformance-missing-${randomUUID()}`);
        } catch (error) {
          return expectError(error, 'TaskNotFoundError');
        }
        throw new Error('GetTask of an id never issued returned a task');
      },
    ],
    [
      'same-context',
      '§3.4.1 contextId',
      async (state) => {
        const task = needTask(state.task);
        const sent = await state.agent.send({ text, contextId: task.contextId });
        if (sent.result.contextId !== task.contextId) {
          throw new Error(`a message sent in context ${task.contextId} was answered in ${sent.result.contextId}`);
        }
        return 'a second message in the context stays in it';
      },
    ],
    [
      'list',
      '§3.1.4 ListTasks',
      async (state) => {
        const task = needTask(state.task);
        let page: Awaited<ReturnType<A2AClient['listTasksPage']>>;
        try {
          page = await state.agent.listTasksPage({ contextId: task.contextId });
        } catch (error) {
          if (A2AClientError.is(error) && error.a2aName === 'UnsupportedOperationError') {
            throw new Skip('the agent answers UnsupportedOperationError');
          }
          throw error;
        }
        if (!page.tasks.some((t) => t.id === task.id)) throw new Error('the task sent is not in its context’s list');
        return `${page.tasks.length} task(s) in the context, the one sent among them`;
      },
    ],
    [
      'cancel-final',
      '§3.1.5 CancelTask',
      async (state) => {
        const task = needTask(state.task);
        const current = await state.agent.getTask(task.id);
        if (!isFinalState(current.status.state)) {
          const canceled = await state.agent.cancelTask(task.id);
          return `a running task canceled: ${canceled.status.state}`;
        }
        try {
          await state.agent.cancelTask(task.id);
        } catch (error) {
          return expectError(error, 'TaskNotCancelableError');
        }
        throw new Error(`canceling a task in ${current.status.state} did not fail`);
      },
    ],
    [
      'stream',
      '§3.1.2 SendStreamingMessage',
      async (state) => {
        if (!state.agent.capabilities.streaming) throw new Skip('the card does not declare streaming');
        let first: string | undefined;
        let count = 0;
        for await (const event of state.agent.stream({ text })) {
          first ??= event.result.kind;
          count++;
        }
        if (first !== 'task' && first !== 'message') throw new Error(`the first event was a ${first ?? 'nothing'}`);
        return `first event a ${first === 'task' ? 'Task' : 'Message'}, ${count} event(s) to the end`;
      },
    ],
  ];
}

export async function conformance(ctx: Context, parsed: Parsed): Promise<void> {
  const text = parsed.positionals.join(' ') || 'a2a conformance check';
  const probe = await client(ctx);
  // The bindings asked for with --transport, else every one this CLI speaks.
  const asked = list(ctx.values, 'transport').map(binding);
  const spoken = new Set<string>(asked.length > 0 ? asked : ['JSONRPC', 'HTTP+JSON']);
  const bindings = [
    ...new Set(
      endpointsOf(probe.card)
        .filter((e) => e.version === probe.endpoint.version && spoken.has(e.binding))
        .map((e) => e.binding),
    ),
  ];
  const results: CheckResult[] = [];
  for (const binding of bindings) {
    const agent = await client({ ...ctx, values: { ...ctx.values, transport: [binding] } });
    const state: { agent: A2AClient; task?: Task | undefined } = { agent };
    for (const [check, section, run] of checks(text)) {
      let outcome: Outcome = 'pass';
      let detail: string;
      try {
        detail = await run(state);
      } catch (error) {
        outcome = error instanceof Skip ? 'skip' : 'fail';
        detail = agent.redact(error instanceof Error ? error.message : String(error));
      }
      results.push({ binding, check, section, outcome, detail });
    }
  }
  const count = (outcome: Outcome) => results.filter((r) => r.outcome === outcome).length;
  const summary = { passed: count('pass'), failed: count('fail'), skipped: count('skip') };
  if (summary.failed > 0) ctx.stderr.write(`warning: ${summary.failed} conformance check(s) failed.\n`);
  if (ctx.format !== 'text') {
    ctx.printer.document({ agent: probe.endpoint.url, version: probe.endpoint.version, checks: results, ...summary });
    return;
  }
  const { printer } = ctx;
  printer.field('Agent', probe.endpoint.url);
  printer.field('A2A Version', probe.endpoint.version);
  for (const r of results)
    printer.field(`${r.binding} ${r.check}`, `${r.outcome.toUpperCase()} (${r.section}): ${r.detail}`);
  printer.field('Passed', summary.passed);
  printer.field('Failed', summary.failed);
  printer.field('Skipped', summary.skipped);
}
