/**
 * A turn's phase (see TurnPhase in turn.ts): the paths a turn takes through queued, running,
 * ending, ended, released and abandoned, and the one transition it refuses (starting twice). The
 * races between a turn's two chains are in turn-end-races.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { MemoryStore } from '@fastify-a2a/store-memory';
import { describe, expect, it } from 'vitest';
import { A2AError } from '../../src/errors.js';
import { Events } from '../../src/runtime/events.js';
import { acceptedTurn } from './helpers.js';

const events = new Events(Date.now, randomUUID);

/** A running turn whose every commit fails until `restore` is called. */
async function runningTurnInOutage(store: MemoryStore) {
  const turn = await acceptedTurn(store);
  turn.start();
  const outage = new A2AError('STORE_UNAVAILABLE', 'down');
  const commit = store.commit.bind(store);
  store.commit = () => Promise.reject(outage);
  return { turn, outage, restore: () => (store.commit = commit) };
}

/** What an illegal transition throws: an INTERNAL error naming both phases. */
const refused = (from: string, to: string) =>
  expect.objectContaining({ code: 'INTERNAL', message: expect.stringContaining(`cannot go from ${from} to ${to}`) });

describe('turn phase', () => {
  it('queued → running → ending → ended: the commit that writes the end releases the slot', async () => {
    const store = new MemoryStore();
    const turn = await acceptedTurn(store);
    expect(turn.phase).toBe('queued');
    turn.start();
    expect(turn.phase).toBe('running');
    const written = turn.stage((task) => [events.status(task, 'completed')]);
    expect(turn.phase).toBe('ending');
    expect(await written).toBe(true);
    expect(turn.phase).toBe('ended');
    expect(turn.holdsSlot).toBe(false);
    expect(await store.listWorkerTurns('w')).toEqual([]);
  });

  it('drops updates once the turn is ending: the context’s next turn may already run', async () => {
    const turn = await acceptedTurn();
    turn.start();
    void turn.stage((task) => [events.turnEnd(task, turn.messageId)]);
    expect(turn.stage((task) => [events.status(task, 'working')])).toBeUndefined();
    await turn.flush();
    expect(turn.stage((task) => [events.status(task, 'working')])).toBeUndefined();
  });

  it('goes back to running when the commit carrying its end fails, so its failure can still be written', async () => {
    const store = new MemoryStore();
    const { turn, outage, restore } = await runningTurnInOutage(store);
    await expect(turn.stage((task) => [events.turnEnd(task, turn.messageId)])).rejects.toBe(outage);
    expect(turn.phase).toBe('running');
    expect(turn.writeError).toBe(outage);
    restore();
    expect(await turn.stage((task) => [events.status(task, 'failed', 'store was down')])).toBe(true);
    expect(turn.phase).toBe('ended');
  });

  it('refuses to start twice, naming both phases (regression: illegal transitions are visible)', async () => {
    const turn = await acceptedTurn();
    turn.start();
    expect(() => turn.start()).toThrow(refused('running', 'running'));
    expect(turn.phase).toBe('running');
  });

  it('a turn whose slot was released before it ran cannot start; giving up on its end leaves it released', async () => {
    const turn = await acceptedTurn();
    turn.slotReleased();
    expect(() => turn.start()).toThrow(refused('released', 'running'));
    // Its end given up on (lease lost): it holds no slot, so there is nothing to leave to the reaper.
    turn.abandon();
    expect(turn.phase).toBe('released');
    expect(turn.holdsSlot).toBe(false);
    expect(turn.slotLeftToReaper).toBe(false);
    // Its end is still written (as before the phase, 179532e): the task is not terminal yet.
    expect(await turn.stage((task) => [events.status(task, 'failed', 'shut down')])).toBe(true);
    expect(turn.phase).toBe('ended');
  });

  it('an abandoned turn leaves its slot to the reaper, and takes a release that landed after all', async () => {
    const turn = await acceptedTurn();
    turn.start();
    turn.abandon();
    turn.abandon(); // the runner and a drain may both give up on the same end
    expect(turn.phase).toBe('abandoned');
    expect(turn.holdsSlot).toBe(true);
    expect(turn.slotLeftToReaper).toBe(true);
    expect(() => turn.start()).toThrow(refused('abandoned', 'running'));
    // The scheduler's release, started before the abandonment, landed: the slot is gone.
    turn.slotReleased();
    expect(turn.phase).toBe('released');
    expect(turn.holdsSlot).toBe(false);
  });

  it('a release or an abandonment while the end is in flight changes where a failed end goes back to', async () => {
    const store = new MemoryStore();
    const { turn, outage, restore } = await runningTurnInOutage(store);
    const ending = turn.stage((task) => [events.turnEnd(task, turn.messageId)]);
    turn.abandon();
    expect(turn.phase).toBe('ending');
    expect(turn.slotLeftToReaper).toBe(true);
    await expect(ending).rejects.toBe(outage);
    expect(turn.phase).toBe('abandoned');
    const again = turn.stage((task) => [events.status(task, 'failed', 'store was down')]);
    turn.slotReleased();
    expect(turn.holdsSlot).toBe(false);
    await expect(again).rejects.toBe(outage);
    expect(turn.phase).toBe('released');
    restore();
    expect(await turn.stage((task) => [events.status(task, 'failed', 'store was down')])).toBe(true);
    expect(turn.phase).toBe('ended');
  });
});
