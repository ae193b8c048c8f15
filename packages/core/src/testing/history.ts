import { applyEvents } from '../model/task-state.js';
import type { Message, Task } from '../model/types.js';
import type { TaskEvent } from '../store/index.js';
import { agentMessage, appendEvents, createTask, statusUpdate, taskFixture, turnEnd, userMessage } from './fixtures.js';
import { type ConformanceOptions, defineModule } from './harness.js';

/** A task's history, built over several commits, reads back complete and in order. */
export function history(options: ConformanceOptions): void {
  defineModule(options, 'history', (test) => {
    test('history appended over successive commits is returned in order', async ({ expect, store }) => {
      const first = userMessage('first question');
      const task = taskFixture({ history: [first] });
      const ref = { id: task.id, contextId: task.contextId };
      const on = { taskId: task.id, contextId: task.contextId };
      const turns: TaskEvent[][] = [
        [statusUpdate(ref, 'working', { message: agentMessage('thinking…', on) })],
        [
          statusUpdate(ref, 'input-required', { message: agentMessage('which one?', on) }),
          turnEnd(ref, first.messageId),
        ],
        [userMessage('the second', on), statusUpdate(ref, 'working')],
        [statusUpdate(ref, 'completed', { message: agentMessage('done: ✓', on) })],
      ];

      let expected: Task = task;
      await createTask(store, task);
      for (const events of turns) {
        expected = applyEvents(expected, events);
        await appendEvents(store, task.id, events);
        // After every commit, not only at the end: each snapshot replaces the previous one.
        expect((await store.getTask(task.id))?.task.history).toEqual(expected.history);
      }

      const texts = (await store.getTask(task.id))?.task.history?.map((m: Message) =>
        m.parts.map((p) => (p.kind === 'text' ? p.text : '')).join(''),
      );
      expect(texts).toEqual(['first question', 'thinking…', 'which one?', 'the second', 'done: ✓']);
      const kinds = (await store.readEvents(task.id, 0)).map((e) => e.event.kind);
      expect(kinds).toEqual([
        'task',
        'status-update',
        'status-update',
        'turn-end',
        'message',
        'status-update',
        'status-update',
      ]);
    });

    test('a long history (200 messages in 200 commits) keeps its order', async ({ expect, store }) => {
      const task = taskFixture({ state: 'working' });
      await createTask(store, task);
      for (let i = 0; i < 200; i++) {
        await appendEvents(store, task.id, [
          userMessage(`message ${i}`, { taskId: task.id, contextId: task.contextId }),
        ]);
      }
      const record = await store.getTask(task.id);
      expect(record?.version).toBe(201);
      expect(record?.task.history?.map((m) => (m.parts[0]?.kind === 'text' ? m.parts[0].text : ''))).toEqual(
        Array.from({ length: 200 }, (_, i) => `message ${i}`),
      );
    });
  });
}
