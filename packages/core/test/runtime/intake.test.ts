/**
 * Intake alone: a new message is recorded by the commit that takes its turn's slot, and its turn
 * goes to the scheduler; a message id the store's index already holds is a retry (answered from
 * its task, with no second turn or slot), including the same message reaching two workers at once.
 */
import { randomUUID } from 'node:crypto';
import { MemoryStore } from '@fastify-a2a/store-memory';
import { describe, expect, it } from 'vitest';
import { A2AError } from '../../src/errors.js';
import { callContext } from '../../src/protocol/context.js';
import { Events } from '../../src/runtime/events.js';
import { type Accepted, Intake } from '../../src/runtime/intake.js';
import { TaskWriter } from '../../src/runtime/task-writer.js';
import type { Turn } from '../../src/runtime/turn.js';
import { messageDigest } from '../../src/store/index.js';
import { recordingLogger, userMessage } from './helpers.js';

const ctx = callContext();
const events = new Events(Date.now, randomUUID);

function intakeOn(store: MemoryStore, workerId = 'w') {
  const scheduled: Turn[] = [];
  const log = recordingLogger();
  const intake = new Intake({ store, events, log, workerId, scheduler: { schedule: (turn) => scheduled.push(turn) } });
  return { intake, scheduled, log };
}

function turnOf(accepted: Accepted): Turn {
  if (accepted.kind !== 'turn') throw new Error(`expected a turn, got a ${accepted.kind}`);
  return accepted.turn;
}

async function errorOf(promise: Promise<unknown>): Promise<A2AError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!A2AError.is(error)) throw new Error(`expected an A2AError, got ${String(error)}`);
  return error;
}

describe('intake', () => {
  it('a new message: one commit records the task and takes the slot; the turn goes to the scheduler', async () => {
    const store = new MemoryStore();
    const { intake, scheduled } = intakeOn(store);
    const message = userMessage('hello');
    const turn = turnOf(await intake.accept({ message }, ctx));
    expect(scheduled).toEqual([turn]);
    expect(turn.messageId).toBe(message.messageId);
    expect([turn.isNewTask, turn.isNewContext]).toEqual([true, true]);
    expect(turn.slot).toMatchObject({ taskId: turn.taskId, messageId: message.messageId, workerId: 'w' });
    expect(turn.writer.version).toBe(1);
    expect(await store.listWorkerTurns('w')).toEqual([turn.slot]);
    expect(await store.findMessage(message.messageId)).toEqual({
      taskId: turn.taskId,
      contextId: turn.slot?.contextId,
      digest: messageDigest(message),
    });
    const stored = await store.getTask(turn.taskId);
    expect(stored?.task.status.state).toBe('submitted');
    expect(stored?.task.history?.[0]).toMatchObject({ messageId: message.messageId, taskId: turn.taskId });
  });

  it('the same message again is a retry: its task, no second turn and no second slot', async () => {
    const store = new MemoryStore();
    const { intake, scheduled, log } = intakeOn(store);
    const message = userMessage('once', { contextId: 'ctx-retry' });
    const turn = turnOf(await intake.accept({ message }, ctx));
    const retry = await intake.accept({ message }, ctx);
    expect(retry).toMatchObject({ kind: 'retry', taskId: turn.taskId, messageId: message.messageId, version: 1 });
    expect(scheduled).toHaveLength(1);
    expect(await store.listWorkerTurns('w')).toHaveLength(1);
    expect(log.lines.map((line) => line.msg)).toEqual(['a2a: retried message answered with its task']);
  });

  it('the same message reaching two workers at once: one turn, one retry (the index refuses the second commit)', async () => {
    const store = new MemoryStore();
    const a = intakeOn(store, 'a');
    const b = intakeOn(store, 'b');
    const message = userMessage('raced', { contextId: 'ctx-race' });
    const results = await Promise.all([a.intake.accept({ message }, ctx), b.intake.accept({ message }, ctx)]);
    expect(results.map((accepted) => accepted.kind).sort()).toEqual(['retry', 'turn']);
    expect(a.scheduled.length + b.scheduled.length).toBe(1);
    const turn = [...a.scheduled, ...b.scheduled][0];
    expect(results.find((accepted) => accepted.kind === 'retry')).toMatchObject({ taskId: turn?.taskId });
  });

  it('a retried follow-up that finished its task is a retry; a new message to that task is refused (§6.3)', async () => {
    const store = new MemoryStore();
    const { intake, scheduled } = intakeOn(store);
    const first = turnOf(await intake.accept({ message: userMessage('ask') }, ctx));
    const answer = userMessage('answer', { taskId: first.taskId });
    const followUp = turnOf(await intake.accept({ message: answer }, ctx));
    expect([followUp.isNewTask, followUp.isNewContext]).toEqual([false, false]);
    expect(followUp.slot?.position).toBeGreaterThan(first.slot?.position ?? Number.POSITIVE_INFINITY);
    const writer = new TaskWriter(store, followUp.writer.task, followUp.writer.version, undefined);
    await writer.commit((task) => [events.status(task, 'completed')]);

    expect(await intake.accept({ message: answer }, ctx)).toMatchObject({ kind: 'retry', taskId: first.taskId });
    const refused = await errorOf(intake.accept({ message: userMessage('more', { taskId: first.taskId }) }, ctx));
    expect(refused.code).toBe('INVALID_PARAMS');
    expect(refused.message).toMatch(/is completed, a terminal state/);
    expect(scheduled).toHaveLength(2);
  });

  it('refuses a message id already used in another context, naming that context', async () => {
    const store = new MemoryStore();
    const { intake, scheduled } = intakeOn(store);
    const message = userMessage('hi', { contextId: 'ctx-a' });
    await intake.accept({ message }, ctx);
    const refused = await errorOf(intake.accept({ message: { ...message, contextId: 'ctx-b' } }, ctx));
    expect(refused.code).toBe('INVALID_PARAMS');
    expect(refused.message).toMatch(/already used in context "ctx-a"/);
    expect(scheduled).toHaveLength(1);
  });

  it('refuses a contextId that is not the task’s, and an unknown taskId', async () => {
    const store = new MemoryStore();
    const { intake } = intakeOn(store);
    const turn = turnOf(await intake.accept({ message: userMessage('x', { contextId: 'ctx-own' }) }, ctx));
    const mismatch = await errorOf(
      intake.accept({ message: userMessage('y', { taskId: turn.taskId, contextId: 'ctx-other' }) }, ctx),
    );
    expect(mismatch.code).toBe('INVALID_PARAMS');
    expect(mismatch.message).toMatch(/belongs to context "ctx-own"/);
    const unknown = await errorOf(intake.accept({ message: userMessage('z', { taskId: 'no-such-task' }) }, ctx));
    expect(unknown.code).toBe('TASK_NOT_FOUND');
    expect(await store.listWorkerTurns('w')).toHaveLength(1);
  });
});
