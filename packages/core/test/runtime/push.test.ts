/**
 * Push notifications through the runtime, with the reference store, a real webhook receiver on
 * 127.0.0.1 (allow-listed: loopback is refused otherwise) and an injected clock, so throttle and
 * retry waits are stepped rather than slept. The delivery job's own timer is parked (a poll
 * interval of an hour); each test runs deliveries with `deliverPushNotifications()`. Nothing is
 * ever sent to an address other than 127.0.0.1: private ranges are exercised with a resolver that
 * answers from a table.
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import { MemoryStore } from '@fastify-a2a/store-memory';
import { afterEach, describe, expect, it } from 'vitest';
import { A2AError } from '../../src/errors.js';
import type { TurnContext } from '../../src/executor.js';
import type { Task } from '../../src/model/types.js';
import { callContext } from '../../src/protocol/context.js';
import { encodePushNotification } from '../../src/protocol/push-notification.js';
import { notificationHeaders } from '../../src/runtime/jobs/push.js';
import type { A2ARuntime, PushOptions } from '../../src/runtime.js';
import { type Receiver, startReceiver, tableResolver } from '../push/helpers.js';
import { asTask, recordingLogger, useRuntimes, userMessage, waitFor } from './helpers.js';

const T0 = 1_800_000_000_000;
const ALICE = callContext({ principal: { id: 'alice' } });
const BOB = callContext({ principal: { id: 'bob' } });

const receivers: Receiver[] = [];
afterEach(async () => {
  for (const receiver of receivers.splice(0)) await receiver.close();
});

/** A receiver answering each POST with the next status of `statuses` (the last one repeats). */
async function receiver(
  statuses: readonly number[] = [200],
  extra: (req: IncomingMessage, res: ServerResponse, n: number) => void = () => {},
): Promise<Receiver & { url: string; bodies: () => Task[] }> {
  let n = 0;
  const r = await startReceiver((req, res) => {
    const status = statuses[Math.min(n, statuses.length - 1)]!;
    extra(req, res, n++);
    res.statusCode = status;
    res.end('ok');
  });
  receivers.push(r);
  return Object.assign(r, {
    url: `http://127.0.0.1:${r.port}/hook?secret=s`,
    bodies: () => r.received.map((x) => JSON.parse(x.body) as Task),
  });
}

/**
 * An agent the test drives step by step: each `say(command)` runs one command in the current
 * turn ('working', 'artifact', 'complete', 'input', 'fail') and resolves once it is stored.
 */
function scriptedAgent(store: MemoryStore) {
  const queue: string[] = [];
  let wake: (() => void) | undefined;
  const done: Array<() => void> = [];
  async function next(signal: AbortSignal): Promise<string> {
    while (queue.length === 0) {
      if (signal.aborted) return 'stop';
      await new Promise<void>((r) => {
        wake = r;
        signal.addEventListener('abort', () => r(), { once: true });
      });
    }
    return queue.shift()!;
  }
  const executor = async (turn: TurnContext): Promise<void> => {
    let n = 0;
    for (;;) {
      const command = await next(turn.signal);
      if (command === 'stop') return;
      n++;
      const versionOf = async () => (await store.getTask(turn.taskId))?.version ?? 0;
      const before = await versionOf();
      if (command === 'working') await turn.working(`step ${n}`);
      else if (command === 'artifact') await turn.artifact({ artifactId: 'a', text: `chunk ${n}`, append: n > 1 });
      else if (command === 'complete') await turn.complete('done');
      else if (command === 'input') await turn.requireInput('which one?');
      else if (command === 'fail') await turn.fail('broken');
      // Non-final updates resolve once queued: wait for their commit.
      await waitFor(async () => (await versionOf()) > before, 5000, `the commit of ${command}`);
      done.shift()?.();
      if (command === 'complete' || command === 'input' || command === 'fail') return;
    }
  };
  return {
    executor,
    /** Runs `command` and waits until its update is stored. */
    say(command: string): Promise<void> {
      const handled = new Promise<void>((r) => done.push(r));
      queue.push(command);
      wake?.();
      return handled;
    },
  };
}

interface Setup {
  runtime: A2ARuntime;
  store: MemoryStore;
  clock: { now: number };
  log: ReturnType<typeof recordingLogger>;
  agent: ReturnType<typeof scriptedAgent>;
}

const makeRuntime = useRuntimes();

function setup(push: Partial<PushOptions> = {}): Setup {
  const store = new MemoryStore();
  const clock = { now: T0 };
  const log = recordingLogger();
  const agent = scriptedAgent(store);
  const runtime = makeRuntime(agent.executor, {
    store,
    clock: () => clock.now,
    logger: log,
    push: {
      encodeNotification: encodePushNotification,
      allowCidrs: ['127.0.0.1/32'],
      pollIntervalMs: 3_600_000,
      ...push,
    },
  });
  return { runtime, store, clock, log, agent };
}

/** Sends a non-blocking message (a new task, or a follow-up of `taskId`), with an optional push config. */
async function send(
  s: Setup,
  options: { taskId?: string; url?: string; token?: string; ctx?: ReturnType<typeof callContext> } = {},
): Promise<Task> {
  const { taskId, url, token, ctx = ALICE } = options;
  const result = await s.runtime.sendMessage(
    {
      message: userMessage('go', taskId === undefined ? {} : { taskId }),
      configuration: {
        blocking: false,
        ...(url === undefined ? {} : { pushNotificationConfig: { url, ...(token === undefined ? {} : { token }) } }),
      },
    },
    ctx,
  );
  return asTask(result);
}

const states = (bodies: Task[]): string[] => bodies.map((b) => b.status.state);

async function rejection(promise: Promise<unknown>): Promise<A2AError> {
  try {
    await promise;
  } catch (error) {
    if (A2AError.is(error)) return error;
    throw error;
  }
  throw new Error('expected a rejection');
}

describe('push notification configs', () => {
  it('set, get, list, delete: several configs per task, an id-less one gets the task id', async () => {
    const s = setup();
    const r = await receiver();
    const task = await send(s);
    const a = await s.runtime.setPushConfig(
      { taskId: task.id, pushNotificationConfig: { id: 'a', url: r.url, token: 'tok-a' } },
      ALICE,
    );
    expect(a).toEqual({ taskId: task.id, pushNotificationConfig: { id: 'a', url: r.url, token: 'tok-a' } });
    const anonymous = await s.runtime.setPushConfig(
      {
        taskId: task.id,
        pushNotificationConfig: { url: r.url, authentication: { schemes: ['Bearer'], credentials: 'cred' } },
      },
      ALICE,
    );
    expect(anonymous.pushNotificationConfig.id).toBe(task.id);
    // 0.3's get without a config id reads the id-less config back.
    expect(await s.runtime.getPushConfig({ id: task.id }, ALICE)).toEqual(anonymous);
    expect(await s.runtime.getPushConfig({ id: task.id, pushNotificationConfigId: 'a' }, ALICE)).toEqual(a);
    expect((await s.runtime.listPushConfigs({ id: task.id }, ALICE)).map((c) => c.pushNotificationConfig.id)).toEqual([
      'a',
      task.id,
    ]);

    // Setting the same id again replaces it.
    await s.runtime.setPushConfig({ taskId: task.id, pushNotificationConfig: { id: 'a', url: `${r.url}&v=2` } }, ALICE);
    const listed = await s.runtime.listPushConfigs({ id: task.id }, ALICE);
    expect(listed.map((c) => c.pushNotificationConfig.url)).toEqual([`${r.url}&v=2`, r.url]);

    await s.runtime.deletePushConfig({ id: task.id, pushNotificationConfigId: 'a' }, ALICE);
    expect((await s.runtime.listPushConfigs({ id: task.id }, ALICE)).length).toBe(1);
    // 1.0 §3.1.10: deleting is idempotent; a second delete has the effect the first had.
    await s.runtime.deletePushConfig({ id: task.id, pushNotificationConfigId: 'a' }, ALICE);
    expect((await s.runtime.listPushConfigs({ id: task.id }, ALICE)).map((c) => c.pushNotificationConfig.id)).toEqual([
      task.id,
    ]);
    // An unknown task is still not found.
    const missing = await rejection(
      s.runtime.deletePushConfig({ id: 'no-such-task', pushNotificationConfigId: 'a' }, ALICE),
    );
    expect(missing.code).toBe('TASK_NOT_FOUND');
  });

  it("another principal's task is not found for every config operation", async () => {
    const s = setup();
    const r = await receiver();
    const task = await send(s, { url: r.url });
    const calls = [
      s.runtime.setPushConfig({ taskId: task.id, pushNotificationConfig: { url: r.url } }, BOB),
      s.runtime.getPushConfig({ id: task.id }, BOB),
      s.runtime.listPushConfigs({ id: task.id }, BOB),
      s.runtime.deletePushConfig({ id: task.id, pushNotificationConfigId: task.id }, BOB),
    ];
    for (const call of calls) {
      const error = await rejection(call);
      expect(error.code).toBe('TASK_NOT_FOUND');
      expect(error.message).toBe(`Task not found: no task with id "${task.id}" exists (it may have expired).`);
    }
    // Alice's config is untouched.
    expect((await s.runtime.listPushConfigs({ id: task.id }, ALICE)).length).toBe(1);
  });

  it('refuses internal destinations at set time, naming why (-32602), and stores nothing', async () => {
    const s = setup({
      allowCidrs: [],
      resolver: tableResolver({ 'hooks.example': ['10.0.0.5'], 'metadata.example': ['169.254.169.254'] }),
    });
    const task = await send(s);
    const cases: Array<[string, RegExp]> = [
      ['http://127.0.0.1:9/hook', /loopback/],
      ['http://hooks.example/hook', /resolves to 10\.0\.0\.5, a private address \(RFC 1918\)/],
      ['http://metadata.example/latest', /169\.254\.169\.254.*link-local/],
      ['http://[::ffff:192.168.1.1]/', /IPv4-mapped/],
      ['ftp://hooks.example/', /scheme "ftp:" is not allowed/],
    ];
    for (const [url, why] of cases) {
      const error = await rejection(
        s.runtime.setPushConfig({ taskId: task.id, pushNotificationConfig: { url } }, ALICE),
      );
      expect(error.code).toBe('PUSH_URL_REFUSED');
      expect(error.jsonRpcCode).toBe(-32602);
      expect(error.message).toMatch(why);
    }
    expect(await s.runtime.listPushConfigs({ id: task.id }, ALICE)).toEqual([]);
  });

  it('a message/send whose push URL is refused creates no task', async () => {
    const s = setup({ allowCidrs: [] });
    const error = await rejection(send(s, { url: 'http://127.0.0.1:9/hook' }));
    expect(error.code).toBe('PUSH_URL_REFUSED');
    expect((await s.runtime.listTasks({}, ALICE)).totalSize).toBe(0);
  });

  it('the allow-lists let a trusted internal receiver through: allowHosts by name, allowCidrs by block', async () => {
    const resolver = tableResolver({ 'hooks.internal': ['10.1.2.3'] });
    const byHost = setup({ allowCidrs: [], allowHosts: ['hooks.internal'], resolver });
    const task = await send(byHost);
    await byHost.runtime.setPushConfig(
      { taskId: task.id, pushNotificationConfig: { url: 'http://hooks.internal/x' } },
      ALICE,
    );
    const byCidr = setup({ allowCidrs: ['10.1.0.0/16'], resolver });
    const other = await send(byCidr);
    await byCidr.runtime.setPushConfig(
      { taskId: other.id, pushNotificationConfig: { url: 'http://hooks.internal/x' } },
      ALICE,
    );
    const refused = setup({ allowCidrs: ['10.2.0.0/16'], resolver });
    const third = await send(refused);
    const error = await rejection(
      refused.runtime.setPushConfig(
        { taskId: third.id, pushNotificationConfig: { url: 'http://hooks.internal/x' } },
        ALICE,
      ),
    );
    expect(error.message).toContain('allow it with allowCidrs (e.g. "10.1.2.3/32")');
  });

  it('refuses the operations when push is off', async () => {
    const runtime = makeRuntime(async () => {});
    const error = await rejection(runtime.listPushConfigs({ id: 'x' }));
    expect(error.code).toBe('PUSH_NOTIFICATION_NOT_SUPPORTED');
  });
});

describe('push notification delivery', () => {
  it('POSTs the task to the receiver with both headers; a 0.3 config gets the Task, a 1.0 one a StreamResponse', async () => {
    const s = setup({ throttleMs: 0 });
    const r = await receiver();
    const task = await send(s, { url: r.url, token: 'tok-03' });
    const v1 = callContext({ principal: { id: 'alice' }, version: '1.0' });
    await s.runtime.setPushConfig(
      {
        taskId: task.id,
        pushNotificationConfig: {
          id: 'v1',
          url: r.url,
          authentication: { schemes: ['Bearer'], credentials: 'cred-1' },
        },
      },
      v1,
    );
    await s.agent.say('complete');
    await s.runtime.deliverPushNotifications();
    expect(r.received.length).toBe(2);
    const byToken = new Map(r.received.map((x) => [x.headers['x-a2a-notification-token'], x]));
    const v03 = byToken.get('tok-03')!;
    expect(v03.method).toBe('POST');
    expect(v03.url).toBe('/hook?secret=s');
    expect(v03.headers.authorization).toBe('Bearer tok-03');
    expect(v03.headers['content-type']).toBe('application/json');
    const body03 = JSON.parse(v03.body) as Task;
    expect(body03).toMatchObject({ kind: 'task', id: task.id, status: { state: 'completed' } });
    const v10 = byToken.get('cred-1')!;
    expect(v10.headers.authorization).toBe('Bearer cred-1');
    const body10 = JSON.parse(v10.body) as { task: { id: string; status: { state: string } } };
    expect(body10.task.id).toBe(task.id);
    expect(body10.task.status.state).toBe('TASK_STATE_COMPLETED');

    // Delivered: nothing more goes out.
    await s.runtime.deliverPushNotifications();
    expect(r.received.length).toBe(2);
    const deliveries = await s.store.listPushDeliveries({ taskId: task.id });
    expect(deliveries.map((d) => [d.state.cursor === d.taskVersion, d.state.lastStatus, d.state.failed])).toEqual([
      [true, 200, false],
      [true, 200, false],
    ]);
  });

  it('header rules for each token shape', () => {
    expect(notificationHeaders({ id: 'a', url: 'u', token: 't' })).toEqual({
      'content-type': 'application/json',
      authorization: 'Bearer t',
      'x-a2a-notification-token': 't',
    });
    expect(
      notificationHeaders({ id: 'a', url: 'u', authentication: { schemes: ['bearer'], credentials: 'c' } }),
    ).toEqual({
      'content-type': 'application/json',
      authorization: 'Bearer c',
      'x-a2a-notification-token': 'c',
    });
    // Both given: the credentials authenticate, the token is the notification token.
    expect(
      notificationHeaders({
        id: 'a',
        url: 'u',
        token: 't',
        authentication: { schemes: ['Basic'], credentials: 'dXNlcg==' },
      }),
    ).toEqual({ 'content-type': 'application/json', authorization: 'Basic dXNlcg==', 'x-a2a-notification-token': 't' });
    expect(notificationHeaders({ id: 'a', url: 'u' })).toEqual({ 'content-type': 'application/json' });
  });

  it('throttles non-final updates to one POST per window carrying the latest state; terminal goes at once', async () => {
    const s = setup({ throttleMs: 1500 });
    const r = await receiver();
    const task = await send(s, { url: r.url });
    await s.agent.say('working');
    await s.runtime.deliverPushNotifications();
    expect(states(r.bodies())).toEqual(['working']);

    await s.agent.say('working');
    await s.agent.say('artifact');
    s.clock.now += 1000;
    await s.runtime.deliverPushNotifications();
    expect(r.received.length).toBe(1); // inside the window

    s.clock.now += 600;
    await s.runtime.deliverPushNotifications();
    const second = r.bodies()[1]!;
    expect(second.status.state).toBe('working');
    expect(second.artifacts?.[0]?.parts).toEqual([{ kind: 'text', text: 'chunk 3' }]);
    expect(r.received.length).toBe(2);

    await s.agent.say('working');
    await s.agent.say('complete');
    // Still inside the window of the second POST, yet the terminal state goes out now, with artifacts.
    await s.runtime.deliverPushNotifications();
    expect(states(r.bodies())).toEqual(['working', 'working', 'completed']);
    expect(r.bodies()[2]!.artifacts?.[0]?.artifactId).toBe('a');
    expect(r.bodies()[2]!.id).toBe(task.id);
  });

  it('an interrupted state the task moved past before delivery is still delivered, first and as it was', async () => {
    const s = setup({ throttleMs: 1500 });
    const r = await receiver();
    const task = await send(s, { url: r.url });
    await s.agent.say('working');
    await s.runtime.deliverPushNotifications();
    await s.agent.say('input');
    // The client answers before any delivery ran (a delivery within the throttle window would be
    // immediate anyway; here none ran at all).
    await send(s, { taskId: task.id });
    await s.agent.say('working');
    s.clock.now += 2000;
    await s.runtime.deliverPushNotifications();
    await s.runtime.deliverPushNotifications();
    s.clock.now += 2000;
    await s.runtime.deliverPushNotifications();
    const bodies = r.bodies();
    expect(states(bodies)).toEqual(['working', 'input-required', 'working']);
    expect(bodies[1]!.status.message?.parts).toEqual([{ kind: 'text', text: 'which one?' }]);
    expect(bodies[2]!.history!.length).toBeGreaterThan(bodies[1]!.history!.length);
  });

  it('retries with the backoff against a receiver that fails then recovers, and honours Retry-After', async () => {
    const s = setup({ throttleMs: 0, retryDelaysMs: [1000, 3000, 9000] });
    const r = await receiver([503, 429, 200], (_req, res, n) => {
      if (n === 1) res.setHeader('retry-after', '7');
    });
    const task = await send(s, { url: r.url });
    await s.agent.say('complete');
    await s.runtime.deliverPushNotifications();
    expect(r.received.length).toBe(1);
    let [delivery] = await s.store.listPushDeliveries({ taskId: task.id });
    expect(delivery!.state).toMatchObject({ attempts: 1, nextAttemptAt: T0 + 1000, lastStatus: 503, failed: false });
    expect(delivery!.state.lastError).toContain('HTTP 503');

    s.clock.now = T0 + 999;
    await s.runtime.deliverPushNotifications();
    expect(r.received.length).toBe(1);
    s.clock.now = T0 + 1000;
    await s.runtime.deliverPushNotifications();
    expect(r.received.length).toBe(2);
    [delivery] = await s.store.listPushDeliveries({ taskId: task.id });
    // The receiver's Retry-After (7 s) replaces the 3 s of the backoff.
    expect(delivery!.state).toMatchObject({ attempts: 2, nextAttemptAt: T0 + 1000 + 7000, lastStatus: 429 });

    s.clock.now = T0 + 8000;
    await s.runtime.deliverPushNotifications();
    expect(r.received.length).toBe(3);
    [delivery] = await s.store.listPushDeliveries({ taskId: task.id });
    expect(delivery!.state).toMatchObject({ attempts: 0, lastStatus: 200, failed: false, lastError: null });
    expect(states(r.bodies())).toEqual(['completed', 'completed', 'completed']);
  });

  it('gives up after the last retry: the delivery is failed, listed and logged', async () => {
    const s = setup({ throttleMs: 0, retryDelaysMs: [10, 20] });
    const r = await receiver([500]);
    const task = await send(s, { url: r.url });
    await s.agent.say('complete');
    for (const at of [0, 10, 30, 100, 1000]) {
      s.clock.now = T0 + at;
      await s.runtime.deliverPushNotifications();
    }
    expect(r.received.length).toBe(3); // the first attempt and two retries
    const failed = await s.store.listPushDeliveries({ failed: true });
    expect(failed.map((d) => [d.config.taskId, d.state.attempts, d.state.lastStatus])).toEqual([[task.id, 3, 500]]);
    const warning = s.log.lines.find((l) => l.level === 'warn');
    expect(warning?.msg).toContain('push notification delivery failed; the config is marked failed');
    expect(warning?.obj).toMatchObject({ taskId: task.id, attempts: 3, status: 500 });

    // Saving the config again starts its delivery afresh.
    await s.runtime.setPushConfig({ taskId: task.id, pushNotificationConfig: { url: r.url } }, ALICE);
    expect(await s.store.listPushDeliveries({ failed: true })).toEqual([]);
  });

  it('no retry on a 4xx other than 408/429, nor on a redirect', async () => {
    for (const status of [400, 401, 404, 302]) {
      const s = setup({ throttleMs: 0 });
      const r = await receiver([status]);
      const task = await send(s, { url: r.url });
      await s.agent.say('fail');
      await s.runtime.deliverPushNotifications();
      s.clock.now += 60_000;
      await s.runtime.deliverPushNotifications();
      expect(r.received.length).toBe(1);
      const [delivery] = await s.store.listPushDeliveries({ taskId: task.id });
      expect(delivery!.state).toMatchObject({ failed: true, attempts: 1, lastStatus: status });
    }
    const s = setup({ throttleMs: 0 });
    const r = await receiver([408, 200]);
    await send(s, { url: r.url });
    await s.agent.say('complete');
    await s.runtime.deliverPushNotifications();
    s.clock.now += 1000;
    await s.runtime.deliverPushNotifications();
    expect(r.received.length).toBe(2);
  });

  it('checks the destination again at delivery: a name that now resolves to a private address gets nothing', async () => {
    const table: Record<string, string[]> = { 'hooks.example': ['93.184.216.34'] };
    const resolver = tableResolver(table);
    const s = setup({ allowCidrs: [], resolver, throttleMs: 0 });
    const task = await send(s, { url: 'http://hooks.example/hook' });
    // DNS rebinding: the name passed at set time and now points inside the network.
    table['hooks.example'] = ['10.0.0.5'];
    await s.agent.say('complete');
    await s.runtime.deliverPushNotifications();
    const [delivery] = await s.store.listPushDeliveries({ taskId: task.id });
    expect(delivery!.state.failed).toBe(true);
    expect(delivery!.state.lastError).toContain('private address (RFC 1918)');
    expect(resolver.calls).toEqual(['hooks.example', 'hooks.example']);
  });

  it('a claim that fills every delivery slot claims again as soon as one frees, not at the next poll', async () => {
    const store = new MemoryStore();
    const r = await receiver();
    const runtime = makeRuntime(async (turn: TurnContext) => turn.complete('hi'), {
      store,
      push: {
        encodeNotification: encodePushNotification,
        allowCidrs: ['127.0.0.1/32'],
        pollIntervalMs: 3_600_000,
        concurrency: 2,
      },
    });
    for (let i = 0; i < 7; i++) {
      await runtime.sendMessage(
        { message: userMessage(`go ${i}`), configuration: { pushNotificationConfig: { url: r.url } } },
        ALICE,
      );
    }
    // One tick of the job (the poll is an hour away): its full claims chain into the next.
    await runtime.deliverPushNotifications();
    expect(r.received.length).toBe(7);
    expect(new Set(r.bodies().map((b) => b.id)).size).toBe(7);
  });

  it('delivers on its own timer: a task completes and the receiver gets it without being asked', async () => {
    const store = new MemoryStore();
    const r = await receiver();
    const runtime = makeRuntime(async (turn: TurnContext) => turn.complete('hi'), {
      store,
      push: { encodeNotification: encodePushNotification, allowCidrs: ['127.0.0.1/32'], pollIntervalMs: 20 },
    });
    await runtime.sendMessage(
      { message: userMessage('go'), configuration: { pushNotificationConfig: { url: r.url } } },
      ALICE,
    );
    await waitFor(() => r.received.length > 0, 5000, 'a delivery');
    expect(states(r.bodies())).toEqual(['completed']);
  });
});
