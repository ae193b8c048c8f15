/**
 * The events hub's bookkeeping over real HTTP with a real store: connections that leave are
 * forgotten, and the hub's timers run only while somebody is connected.
 */

import { MemoryStore } from '@fastify-a2a/store-memory';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { MonitorHub } from '../../src/monitor/events.js';
import { listen, waitFor } from '../helpers.js';
import { EventsReader } from './sse.js';

const apps: FastifyInstance[] = [];
const readers: EventsReader[] = [];
afterEach(async () => {
  for (const reader of readers.splice(0)) reader.close();
  for (const app of apps.splice(0)) await app.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A hub behind `/events`, opened after `delayMs` (an operator check that takes its time). */
async function serve(store: MemoryStore, delayMs = 0): Promise<{ hub: MonitorHub; url: string }> {
  const hub = new MonitorHub({
    store,
    workerId: 'w',
    agentPrefix: '/a2a',
    maxBufferedEvents: 100,
    heartbeatIntervalMs: 1000,
    onError: () => {},
  });
  const app = Fastify({ logger: false });
  apps.push(app);
  app.addHook('preClose', async () => hub.close());
  app.get('/events', async (request, reply) => {
    if (delayMs > 0) await sleep(delayMs);
    const lastEventId = request.headers['last-event-id'];
    await hub.open(reply, typeof lastEventId === 'string' ? lastEventId : undefined);
  });
  return { hub, url: await listen(app) };
}

describe('the monitor’s events hub', () => {
  it('forgets a connection whose client left before the stream was opened', async () => {
    const { hub, url } = await serve(new MemoryStore(), 300);
    const controller = new AbortController();
    const res = fetch(`${url}/events`, { signal: controller.signal }).catch(() => undefined);
    await sleep(100);
    controller.abort();
    await res;
    await sleep(500);
    expect(hub.size).toBe(0);
  });

  it('stops its timers when the last connection leaves, on a store without subscribeAll', async () => {
    const store = new MemoryStore();
    // subscribeAll is optional: a store may not have it.
    Object.defineProperty(store, 'subscribeAll', { value: undefined });
    let reads = 0;
    const listWorkers = store.listWorkers.bind(store);
    store.listWorkers = (ctx) => {
      reads++;
      return listWorkers(ctx);
    };
    const { hub, url } = await serve(store);
    const a = await EventsReader.open(`${url}/events`, {});
    const b = await EventsReader.open(`${url}/events`, {});
    readers.push(a, b);
    await waitFor(() => a.events.length > 0 && b.events.length > 0);
    a.close();
    b.close();
    await waitFor(() => hub.size === 0);
    const before = reads;
    // Longer than the hub's worker poll (2 s): nobody is connected, so nothing reads the store.
    await sleep(2500);
    expect(reads).toBe(before);
  });

  it('sends resync without an id, so that the client does not resume past the changes it missed', async () => {
    const store = new MemoryStore();
    // A store that cannot list changed tasks: a resume is answered with resync.
    Object.defineProperty(store, 'listTasks', { value: undefined });
    const { url } = await serve(store);
    const reader = await EventsReader.open(`${url}/events`, { 'last-event-id': `${Date.now()}.1` });
    readers.push(reader);
    await reader.done;
    const resync = reader.events.find((e) => e.event === 'resync');
    expect(resync?.data).toEqual({ reason: 'this store cannot list changed tasks; reload everything' });
    expect(resync?.id).toBeUndefined();
    expect(reader.lastId).toBe(reader.events.find((e) => e.event === 'hello')?.id);
  });
});
