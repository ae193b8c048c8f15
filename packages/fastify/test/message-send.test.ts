import type { Message, Part, Task } from '@fastify-a2a/core';
import { MemoryStore } from '@fastify-a2a/store-memory';
import { afterEach, describe, expect, it } from 'vitest';
import { echoAgent } from '../../../examples/demo/src/agents.js';
import { buildApp, type TestApp, textParts, userMessage, waitFor } from './helpers.js';

let t: TestApp;
afterEach(async () => {
  await t?.app.close();
});

function result<T>(body: { result?: T; error?: unknown }): T {
  if (body.error !== undefined || body.result === undefined)
    throw new Error(`expected a result, got ${JSON.stringify(body)}`);
  return body.result;
}

describe('message/send', () => {
  it('blocks until the task completes and returns it with artifacts and history', async () => {
    t = await buildApp(echoAgent);
    const task = result(await t.call<Task>('message/send', { message: userMessage('hello brave new world') }));
    expect(task.kind).toBe('task');
    expect(task.status.state).toBe('completed');
    expect(task.artifacts).toHaveLength(1);
    expect(textParts(task.artifacts?.[0]?.parts)).toBe('hello brave new world');
    expect(task.history?.[0]).toMatchObject({ role: 'user', taskId: task.id, contextId: task.contextId });
  });

  it('non-blocking returns the submitted task at once; the turn goes on and tasks/get sees it end', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    t = await buildApp(async (turn) => {
      await gate;
      await turn.complete('finished');
    });
    const task = result(
      await t.call<Task>('message/send', { message: userMessage('go'), configuration: { blocking: false } }),
    );
    expect(['submitted', 'working']).toContain(task.status.state);
    release();
    const done = await waitFor(async () => {
      const got = result(await t.call<Task>('tasks/get', { id: task.id }));
      return got.status.state === 'completed' ? got : undefined;
    });
    expect(textParts(done.status.message?.parts)).toBe('finished');
  });

  it('returns the agent reply as a Message when the agent answers with reply()', async () => {
    t = await buildApp(async (turn) => turn.reply(`pong: ${turn.text}`));
    const message = result(await t.call<Message>('message/send', { message: userMessage('ping') }));
    expect(message.kind).toBe('message');
    expect(message.role).toBe('agent');
    expect(textParts(message.parts)).toBe('pong: ping');
    expect(message.taskId).toBeTypeOf('string');
  });

  it('returns when the task is interrupted (input-required) and resumes on a follow-up carrying the taskId', async () => {
    t = await buildApp(echoAgent);
    const asked = result(await t.call<Task>('message/send', { message: userMessage('ask:What is your name?') }));
    expect(asked.status.state).toBe('input-required');
    expect(textParts(asked.status.message?.parts)).toBe('What is your name?');
    const answered = result(await t.call<Task>('message/send', { message: userMessage('Ada', { taskId: asked.id }) }));
    expect(answered.id).toBe(asked.id);
    expect(answered.contextId).toBe(asked.contextId);
    expect(answered.status.state).toBe('completed');
    expect(textParts(answered.artifacts?.[0]?.parts)).toBe('You answered: Ada');
    // user question, agent question, user answer, agent thanks
    expect(answered.history?.map((m) => m.role)).toEqual(['user', 'agent', 'user', 'agent']);
  });

  it('returns when the turn ends with the task still working, and a later message continues the task', async () => {
    t = await buildApp(async (turn) => {
      if (turn.isNewTask) await turn.working('started');
      else await turn.complete(`continued with ${turn.text}`);
    });
    const first = result(await t.call<Task>('message/send', { message: userMessage('one') }));
    expect(first.status.state).toBe('working');
    const second = result(await t.call<Task>('message/send', { message: userMessage('two', { taskId: first.id }) }));
    expect(second.status.state).toBe('completed');
    expect(textParts(second.status.message?.parts)).toBe('continued with two');
  });

  it('honours historyLength', async () => {
    t = await buildApp(echoAgent);
    const asked = result(await t.call<Task>('message/send', { message: userMessage('ask:q') }));
    const full = result(await t.call<Task>('message/send', { message: userMessage('a', { taskId: asked.id }) }));
    expect(full.history).toHaveLength(4);
    const last1 = result(
      await t.call<Task>('message/send', {
        message: userMessage('ask:again'),
        configuration: { historyLength: 1 },
      }),
    );
    expect(last1.history).toHaveLength(1);
    expect(last1.history?.[0]?.role).toBe('agent');
    const none = result(await t.call<Task>('tasks/get', { id: full.id, historyLength: 0 }));
    expect(none.history).toEqual([]);
    const two = result(await t.call<Task>('tasks/get', { id: full.id, historyLength: 2 }));
    expect(two.history?.map((m) => m.role)).toEqual(['user', 'agent']);
    expect(textParts(two.history?.[0]?.parts)).toBe('a');
  });

  it('keeps the contextId the client sends and reuses it across tasks', async () => {
    t = await buildApp(echoAgent);
    const a = result(await t.call<Task>('message/send', { message: userMessage('one', { contextId: 'ctx-1' }) }));
    const b = result(await t.call<Task>('message/send', { message: userMessage('two', { contextId: 'ctx-1' }) }));
    expect(a.contextId).toBe('ctx-1');
    expect(b.contextId).toBe('ctx-1');
    expect(a.id).not.toBe(b.id);
  });

  it('runs the turns of one context one after another, in arrival order', async () => {
    const log: string[] = [];
    t = await buildApp(async (turn) => {
      log.push(`start ${turn.text}`);
      await new Promise((r) => setTimeout(r, 30));
      log.push(`end ${turn.text}`);
      await turn.complete();
    });
    await Promise.all(
      ['1', '2', '3'].map((n) => t.call('message/send', { message: userMessage(n, { contextId: 'serial' }) })),
    );
    expect(log).toEqual(['start 1', 'end 1', 'start 2', 'end 2', 'start 3', 'end 3']);
  });

  it('a turn ends at its final status: the next turn of the context may start, later updates are dropped', async () => {
    let releaseFirst!: () => void;
    const firstHeldBack = new Promise<void>((resolve) => {
      releaseFirst = resolve;
    });
    const log: string[] = [];
    let lateWrites: Promise<unknown> | undefined;
    t = await buildApp(
      async (turn) => {
        log.push(`start ${turn.text}`);
        if (turn.text === 'ask') {
          await turn.requireInput('which one?');
          // Still running after the final status: these belong to no turn any more.
          await firstHeldBack;
          lateWrites = Promise.all([
            turn.artifact({ text: 'late' }),
            turn.working('late status'),
            turn.complete('late'),
          ]);
          await lateWrites;
          log.push('end ask');
          return;
        }
        await turn.complete(`done ${turn.text}`);
        log.push(`end ${turn.text}`);
      },
      { workerId: 'tail-worker' },
    );
    const asked = result(await t.call<Task>('message/send', { message: userMessage('ask', { contextId: 'tail' }) }));
    expect(asked.status.state).toBe('input-required');
    // The first agent call has not returned, yet the context's next turn runs and completes.
    const next = result(await t.call<Task>('message/send', { message: userMessage('next', { contextId: 'tail' }) }));
    expect(next.status.state).toBe('completed');
    expect(log).toEqual(['start ask', 'start next', 'end next']);

    releaseFirst();
    await waitFor(() => log.includes('end ask'));
    await lateWrites;
    const after = result(await t.call<Task>('tasks/get', { id: asked.id }));
    expect(after.status.state).toBe('input-required');
    expect(after.artifacts ?? []).toEqual([]);
    // No queued turn is left behind.
    expect(await t.store.listWorkerTurns('tail-worker')).toEqual([]);
  });

  it('keeps what the agent sent even when the agent changes its objects afterwards', async () => {
    t = await buildApp(async (turn) => {
      const metadata = { step: 1 };
      const parts: Part[] = [{ kind: 'text', text: 'as sent' }];
      await turn.working('busy', metadata);
      await turn.artifact({ parts });
      metadata.step = 99;
      parts[0] = { kind: 'text', text: 'replaced' };
      (parts as { kind: string; text: string }[]).push({ kind: 'text', text: 'added' });
      await turn.complete();
    });
    const task = result(await t.call<Task>('message/send', { message: userMessage('x') }));
    expect(textParts(task.artifacts?.[0]?.parts)).toBe('as sent');
    const events = await t.store.readEvents(task.id, 0);
    // The agent's working status (after the runtime's own, which has no metadata).
    const working = events.findLast((e) => e.event.kind === 'status-update' && e.event.status.state === 'working');
    expect((working?.event as { metadata?: unknown } | undefined)?.metadata).toEqual({ step: 1 });
    expect((await t.store.getTask(task.id))?.task.artifacts?.[0]?.parts).toEqual([{ kind: 'text', text: 'as sent' }]);
  });

  it('lets the agent destructure the turn context, methods included', async () => {
    t = await buildApp(async ({ text, taskId, message, task, working, artifact, complete }) => {
      await working();
      await artifact({
        text: `${text} (${message.parts.length} part, task ${task.id === taskId ? 'ok' : 'mismatch'})`,
      });
      await complete('done');
    });
    const task = result(await t.call<Task>('message/send', { message: userMessage('unpacked') }));
    expect(task.status.state).toBe('completed');
    expect(textParts(task.artifacts?.[0]?.parts)).toBe('unpacked (1 part, task ok)');
  });

  it('runs turns of different contexts concurrently', async () => {
    let running = 0;
    let maxRunning = 0;
    t = await buildApp(async (turn) => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      await new Promise((r) => setTimeout(r, 50));
      running--;
      await turn.complete();
    });
    await Promise.all(
      ['a', 'b', 'c'].map((c) => t.call('message/send', { message: userMessage(c, { contextId: c }) })),
    );
    expect(maxRunning).toBe(3);
  });

  it('gives the agent its context state across turns', async () => {
    t = await buildApp(async (turn) => {
      const count = ((turn.contextState as { count?: number } | undefined)?.count ?? 0) + 1;
      await turn.setContextState({ count });
      await turn.complete(`turn ${count}`);
    });
    for (const n of [1, 2, 3]) {
      const task = result(await t.call<Task>('message/send', { message: userMessage('x', { contextId: 'stateful' }) }));
      expect(textParts(task.status.message?.parts)).toBe(`turn ${n}`);
    }
    const other = result(await t.call<Task>('message/send', { message: userMessage('x', { contextId: 'other' }) }));
    expect(textParts(other.status.message?.parts)).toBe('turn 1');
  });

  it('fails a turn that exceeds turnTimeoutMs and aborts its signal', async () => {
    let aborted = false;
    t = await buildApp(
      async (turn) => {
        turn.signal.addEventListener('abort', () => {
          aborted = true;
        });
        await new Promise((r) => setTimeout(r, 2000));
        await turn.complete('too late');
      },
      { turnTimeoutMs: 50 },
    );
    const task = result(await t.call<Task>('message/send', { message: userMessage('slow') }));
    expect(task.status.state).toBe('failed');
    expect(textParts(task.status.message?.parts)).toMatch(/timed out after 50 ms/);
    expect(aborted).toBe(true);
  });

  it('fails the task when the agent sends an invalid transition', async () => {
    t = await buildApp(async (turn) => {
      await turn.status('submitted');
    });
    const task = result(await t.call<Task>('message/send', { message: userMessage('x') }));
    expect(task.status.state).toBe('failed');
    expect(textParts(task.status.message?.parts)).toMatch(/cannot move from working to submitted/);
  });

  it('drops updates an agent sends after its task was canceled', async () => {
    let lateWrite: Promise<void> | undefined;
    t = await buildApp(async (turn) => {
      await turn.working();
      if (!turn.signal.aborted)
        await new Promise<void>((resolve) => turn.signal.addEventListener('abort', () => resolve()));
      lateWrite = turn.artifact({ text: 'late' }).then(() => undefined);
      await lateWrite;
    });
    const task = result(
      await t.call<Task>('message/send', { message: userMessage('x'), configuration: { blocking: false } }),
    );
    await waitFor(async () => result(await t.call<Task>('tasks/get', { id: task.id })).status.state === 'working');
    result(await t.call<Task>('tasks/cancel', { id: task.id }));
    await waitFor(() => lateWrite !== undefined);
    await lateWrite;
    const after = result(await t.call<Task>('tasks/get', { id: task.id }));
    expect(after.status.state).toBe('canceled');
    expect(after.artifacts ?? []).toEqual([]);
  });
});

describe('retried messages', () => {
  it('a message/send retried with the same messageId returns the original task and starts no second turn', async () => {
    let turns = 0;
    t = await buildApp(async (turn) => {
      turns++;
      await turn.complete(`done ${turns}`);
    });
    const message = userMessage('once');
    const first = result(await t.call<Task>('message/send', { message }));
    const again = result(await t.call<Task>('message/send', { message }));
    expect(again.id).toBe(first.id);
    expect(textParts(again.status.message?.parts)).toBe('done 1');
    expect(turns).toBe(1);
  });

  it('a retried follow-up that completed its task returns the task instead of a terminal-state error', async () => {
    t = await buildApp(echoAgent);
    const asked = result(await t.call<Task>('message/send', { message: userMessage('ask:name?') }));
    const answer = userMessage('Grace', { taskId: asked.id });
    const done = result(await t.call<Task>('message/send', { message: answer }));
    expect(done.status.state).toBe('completed');
    const retried = result(await t.call<Task>('message/send', { message: answer }));
    expect(retried.id).toBe(asked.id);
    expect(retried.status.state).toBe('completed');
    expect(retried.artifacts).toHaveLength(1);
  });

  it('the same messageId in another context is rejected with -32602', async () => {
    t = await buildApp(echoAgent);
    const message = userMessage('hi', { contextId: 'ctx-a' });
    result(await t.call<Task>('message/send', { message }));
    const body = await t.call('message/send', { message: { ...message, contextId: 'ctx-b' } });
    expect(body).toMatchObject({ error: { code: -32602 } });
  });
});

describe('writes', () => {
  it('fails the task when the store refuses the commit of the final status, rather than leaving it working', async () => {
    const store = new MemoryStore();
    const commit = store.commit.bind(store);
    let refused = 0;
    store.commit = (request) => {
      const final = request.events.some((e) => e.kind === 'status-update' && e.status.state === 'completed');
      if (final && refused === 0) {
        refused++;
        return Promise.reject(new Error('disk full (injected)'));
      }
      return commit(request);
    };
    t = await buildApp(
      async (turn) => {
        await turn.artifact({ text: 'partial' });
        await turn.complete('done');
      },
      { store, workerId: 'refusing-store' },
    );
    const task = result(await t.call<Task>('message/send', { message: userMessage('x') }));
    expect(refused).toBe(1);
    expect(task.status.state).toBe('failed');
    expect(textParts(task.status.message?.parts)).toMatch(/disk full \(injected\)/);
    expect(await store.listWorkerTurns('refusing-store')).toEqual([]);
  });

  it('writes a burst of agent updates in few commits, every event once and in order', async () => {
    const store = new MemoryStore();
    let commits = 0;
    const commit = store.commit.bind(store);
    store.commit = (request) => {
      commits++;
      return commit(request);
    };
    t = await buildApp(
      async (turn) => {
        for (let i = 0; i < 40; i++) await turn.artifact({ artifactId: 'a', text: String(i), append: i > 0 });
        await turn.complete();
      },
      { store },
    );
    commits = 0;
    const task = result(await t.call<Task>('message/send', { message: userMessage('burst') }));
    expect(task.status.state).toBe('completed');
    expect(textParts(task.artifacts?.[0]?.parts)).toBe(Array.from({ length: 40 }, (_, i) => String(i)).join(''));
    const events = await t.store.readEvents(task.id, 0);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    // task + working + 40 chunks + completed = 43 events, in far fewer commits than events
    expect(events).toHaveLength(43);
    expect(commits).toBeLessThan(10);
  });
});

describe('tasks/cancel', () => {
  it('aborts the running agent and answers with the canceled task', async () => {
    let sawAbort = false;
    t = await buildApp(echoAgent);
    const task = result(
      await t.call<Task>('message/send', { message: userMessage('sleep:10000'), configuration: { blocking: false } }),
    );
    await waitFor(async () => result(await t.call<Task>('tasks/get', { id: task.id })).status.state === 'working');
    const canceled = result(await t.call<Task>('tasks/cancel', { id: task.id }));
    expect(canceled.status.state).toBe('canceled');
    const events = await t.store.readEvents(task.id, 0);
    sawAbort = events.every((e) => !(e.event.kind === 'status-update' && e.event.status.state === 'completed'));
    expect(sawAbort).toBe(true);
    const got = result(await t.call<Task>('tasks/get', { id: task.id }));
    expect(got.status.state).toBe('canceled');
  });

  it('reaches an agent running under another app of this process that shares the memory store', async () => {
    const store = new MemoryStore();
    let aborted = false;
    t = await buildApp(
      async (turn) => {
        await turn.working();
        await new Promise<void>((resolve) => {
          turn.signal.addEventListener('abort', () => {
            aborted = true;
            resolve();
          });
        });
      },
      { store },
    );
    const other = await buildApp(echoAgent, { store });
    try {
      const task = result(
        await t.call<Task>('message/send', { message: userMessage('wait'), configuration: { blocking: false } }),
      );
      await waitFor(async () => result(await t.call<Task>('tasks/get', { id: task.id })).status.state === 'working');
      expect(result(await other.call<Task>('tasks/cancel', { id: task.id })).status.state).toBe('canceled');
      await waitFor(() => aborted);
    } finally {
      await other.app.close();
    }
  });

  it('a blocking send of a task canceled meanwhile returns the canceled task', async () => {
    t = await buildApp(echoAgent);
    const message = userMessage('sleep:10000', { contextId: 'cancel-blocking' });
    const pending = t.call<Task>('message/send', { message });
    const [record] = await waitFor(async () => {
      const tasks = await t.store.listTasksByContext('cancel-blocking');
      return tasks[0]?.task.status.state === 'working' ? tasks : undefined;
    });
    result(await t.call<Task>('tasks/cancel', { id: record!.task.id }));
    const task = result(await pending);
    expect(task.status.state).toBe('canceled');
  });

  it('cancels a task waiting in input-required', async () => {
    t = await buildApp(echoAgent);
    const asked = result(await t.call<Task>('message/send', { message: userMessage('ask:?') }));
    const canceled = result(await t.call<Task>('tasks/cancel', { id: asked.id }));
    expect(canceled.status.state).toBe('canceled');
  });
});
