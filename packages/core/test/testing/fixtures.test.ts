import { describe, expect, it } from 'vitest';
import { A2AError, VersionConflictError } from '../../src/errors.js';
import { applyEvents } from '../../src/model/task-state.js';
import type { CommitRequest, TaskStore } from '../../src/store/index.js';
import {
  appendEvents,
  appendWithRetry,
  artifactUpdate,
  createTask,
  createTestClock,
  eventually,
  isVersionConflict,
  largeText,
  richTask,
  statusUpdate,
  TEST_CLOCK_START,
  taskFixture,
  userMessage,
} from '../../src/testing/fixtures.js';

describe('createTestClock', () => {
  it('only moves when told to', () => {
    const clock = createTestClock();
    expect(clock()).toBe(TEST_CLOCK_START);
    expect(clock()).toBe(TEST_CLOCK_START);
    expect(clock.advance(250)).toBe(TEST_CLOCK_START + 250);
    expect(clock()).toBe(TEST_CLOCK_START + 250);
    clock.set(5);
    expect(clock()).toBe(5);
    expect(clock.now).toBe(5);
    expect(createTestClock(42)()).toBe(42);
  });
});

describe('builders', () => {
  it('builds events that applyEvents accepts, with fresh ids', () => {
    const task = taskFixture({ state: 'submitted', history: [userMessage('hi')] });
    expect(task).toMatchObject({ kind: 'task', status: { state: 'submitted' } });
    expect(taskFixture().id).not.toBe(taskFixture().id);

    const next = applyEvents(task, [
      statusUpdate(task, 'working', { message: 'on it' }),
      artifactUpdate(task, 'result'),
      statusUpdate(task, 'input-required'),
    ]);
    expect(next.status.state).toBe('input-required');
    expect(next.history?.map((m) => m.role)).toEqual(['user', 'agent']);
    expect(next.artifacts?.[0]?.parts).toEqual([{ kind: 'text', text: 'result' }]);
    expect(statusUpdate(task, 'working').final).toBe(false);
    expect(statusUpdate(task, 'input-required').final).toBe(true);
    expect(statusUpdate(task, 'completed').final).toBe(true);
  });

  it('richTask is valid JSON that survives a JSON round trip, and has no U+0000', () => {
    const task = richTask();
    const json = JSON.stringify(task);
    expect(JSON.parse(json)).toEqual(task);
    expect(json.includes('\\u0000')).toBe(false);
    expect(json).toContain('\\u0001');
  });

  it('largeText has exactly the requested length', () => {
    expect(largeText(1024 * 1024)).toHaveLength(1024 * 1024);
    expect(largeText(7)).toHaveLength(7);
  });
});

/** A tiny versioned map: enough to test the helpers without a real store. */
function fakeStore(): TaskStore & { commits: CommitRequest[] } {
  const tasks = new Map<string, { task: CommitRequest['task']; version: number }>();
  const commits: CommitRequest[] = [];
  return {
    commits,
    async commit(request) {
      const version = tasks.get(request.taskId)?.version ?? 0;
      if (request.expectedVersion !== version) {
        throw new VersionConflictError(request.taskId, request.expectedVersion, version);
      }
      commits.push(request);
      tasks.set(request.taskId, { task: request.task, version: version + request.events.length });
      return { version: version + request.events.length };
    },
    async getTask(taskId) {
      const entry = tasks.get(taskId);
      return entry && { ...entry, createdAt: 0, updatedAt: 0 };
    },
    async getVersions() {
      return new Map();
    },
    async readEvents() {
      return [];
    },
    async listTasksByContext() {
      return [];
    },
    async listActiveTasks() {
      return [];
    },
  };
}

describe('store helpers', () => {
  it('createTask commits the task event first, with the applied snapshot', async () => {
    const store = fakeStore();
    const task = taskFixture();
    const working = statusUpdate(task, 'working');
    expect(await createTask(store, task, [working])).toEqual({ version: 2 });
    expect(store.commits[0]).toEqual({
      taskId: task.id,
      expectedVersion: 0,
      task: applyEvents(undefined, [task, working]),
      events: [task, working],
    });
  });

  it('appendEvents commits against the version it read', async () => {
    const store = fakeStore();
    const task = taskFixture({ state: 'working' });
    await createTask(store, task);
    await appendEvents(store, task.id, [artifactUpdate(task, 'x')]);
    expect(store.commits[1]?.expectedVersion).toBe(1);
    await expect(appendEvents(store, 'missing', [])).rejects.toThrow('task "missing" does not exist');
  });

  it('appendWithRetry retries conflicts and gives up after maxAttempts', async () => {
    const task = taskFixture({ state: 'working' });
    const store = fakeStore();
    await createTask(store, task);
    const flaky = { ...store, commit: fakeStoreCommitWithConflicts(store, 2) };
    const result = await appendWithRetry(flaky, task.id, [artifactUpdate(task, 'x')]);
    expect(result.attempts).toBe(3);

    const hopeless = { ...store, commit: fakeStoreCommitWithConflicts(store, 10) };
    const error = await appendWithRetry(hopeless, task.id, [artifactUpdate(task, 'y')], 3).catch((e: unknown) => e);
    expect(isVersionConflict(error)).toBe(true);
    expect(isVersionConflict(new A2AError('INTERNAL', 'x'))).toBe(false);
    expect(isVersionConflict(new Error('VERSION_CONFLICT'))).toBe(false);
  });

  it('eventually polls until true, and names what it waited for on timeout', async () => {
    let calls = 0;
    await eventually('three calls', () => ++calls >= 3, { interval: 1 });
    expect(calls).toBe(3);
    await expect(eventually('never', () => false, { timeout: 20, interval: 5 })).rejects.toThrow(
      'Timed out after 20 ms waiting for never.',
    );
  });
});

function fakeStoreCommitWithConflicts(store: TaskStore, conflicts: number): TaskStore['commit'] {
  let remaining = conflicts;
  return async (request) => {
    if (remaining-- > 0) throw new VersionConflictError(request.taskId, request.expectedVersion, undefined);
    return store.commit(request);
  };
}
