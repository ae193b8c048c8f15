/**
 * One worker process of the multi-worker tests: the plugin with a test agent on a store URL.
 * Environment: STORE_URL, WORKER_ID, LEASE_TTL_MS, DRAIN_TIMEOUT_MS, TRACE_FILE (turn start/end and
 * aborts are appended there, one JSON line each, so the test sees what ran where and when);
 * PUSH_ALLOWED_CIDRS turns push notifications on (with PUSH_CLAIM_TTL_MS, PUSH_POLL_INTERVAL_MS,
 * PUSH_THROTTLE_MS); DRAFT11_GENERATIONS=1 turns the A2A 1.1 draft's task generations on (long-polls
 * held up to LONG_POLL_MAX_WAIT_MS); MONITOR_TOKEN turns the monitor on, for operator "operator" with that bearer token.
 * Prints `READY <port>` once listening; closes gracefully on SIGTERM. Authentication is on, as in a
 * deployment with users: `Authorization: Bearer tok-<name>` is principal <name>, and a request
 * without credentials (most scenarios) is principal "tester".
 */
import { appendFileSync } from 'node:fs';
import type { TurnContext } from '@fastify-a2a/core';
import Fastify from 'fastify';
import { echoAgent, echoCard, sleep } from '../../../../test-support/agents.js';
import { serveAsChildProcess } from '../../../../test-support/child-server.js';
import { a2aPlugin, operatorTokens } from '../../src/index.js';

const workerId = process.env.WORKER_ID ?? `worker-${process.pid}`;
const traceFile = process.env.TRACE_FILE;

function trace(entry: Record<string, unknown>): void {
  if (traceFile) appendFileSync(traceFile, `${JSON.stringify({ worker: workerId, at: Date.now(), ...entry })}\n`);
}

async function execute(turn: TurnContext): Promise<void> {
  trace({
    event: 'start',
    taskId: turn.taskId,
    contextId: turn.contextId,
    messageId: turn.message.messageId,
    text: turn.text,
  });
  turn.signal.addEventListener('abort', () => trace({ event: 'abort', taskId: turn.taskId }), { once: true });
  try {
    const text = turn.text.trim();
    const tick = /^tick:(\d+):(\d+)$/.exec(text);
    if (tick) {
      // n artifact chunks, `ms` apart: a slow stream of many events.
      const n = Number(tick[1]);
      for (let i = 0; i < n; i++) {
        await sleep(Number(tick[2]), turn.signal);
        await turn.artifact({ artifactId: 'ticks', text: `${i}`, append: i > 0, lastChunk: i === n - 1 });
      }
      await turn.complete(`ticked ${n} times on ${workerId}`);
      return;
    }
    const hold = /^hold:(\d+)$/.exec(text);
    if (hold) {
      // Works for that long, then completes, recording the turn count kept in the context state.
      const turns = ((turn.contextState as { turns?: number } | undefined)?.turns ?? 0) + 1;
      await turn.setContextState({ turns, lastWorker: workerId });
      await sleep(Number(hold[1]), turn.signal);
      // Before the final status: its commit frees the context's next turn, which may then start on
      // another worker before this one's `end` (after the commit's answer) is traced.
      trace({ event: 'finishing', taskId: turn.taskId });
      await turn.complete(`turn ${turns} on ${workerId}`);
      return;
    }
    if (text.startsWith('ask:') || turn.previousState === 'input-required') {
      if (turn.previousState === 'input-required') {
        const asked = (turn.contextState as { askedBy?: string } | undefined)?.askedBy;
        await turn.artifact({
          name: 'answer',
          data: { answer: text, askedBy: asked, answeredBy: workerId, history: turn.task.history?.length },
        });
        await turn.complete();
        return;
      }
      await turn.setContextState({ askedBy: workerId });
      await turn.requireInput(text.slice(4));
      return;
    }
    await echoAgent.execute(turn);
  } finally {
    trace({ event: 'end', taskId: turn.taskId, messageId: turn.message.messageId });
  }
}

const app = Fastify({ logger: { level: process.env.LOG_LEVEL ?? 'warn' } });
await app.register(a2aPlugin, {
  agentCard: echoCard(),
  executor: execute,
  store: process.env.STORE_URL ?? 'memory:',
  workerId,
  leaseTtlMs: Number(process.env.LEASE_TTL_MS ?? 15000),
  drainTimeoutMs: Number(process.env.DRAIN_TIMEOUT_MS ?? 10000),
  followPollIntervalMs: 500,
  retention: false,
  heartbeatIntervalMs: 1000,
  authenticate: (request) => {
    const token = /^Bearer tok-(\w+)$/.exec(request.headers.authorization ?? '');
    return { id: token?.[1] ?? 'tester' };
  },
  ...(process.env.DRAFT11_GENERATIONS === '1'
    ? {
        draft11: {
          generations: true,
          longPollMaxWaitMs: Number(process.env.LONG_POLL_MAX_WAIT_MS ?? 10000),
        },
      }
    : {}),
  ...(process.env.MONITOR_TOKEN === undefined
    ? {}
    : { monitor: { authorize: operatorTokens({ [process.env.MONITOR_TOKEN]: 'operator' }) } }),
  ...(process.env.PUSH_ALLOWED_CIDRS === undefined
    ? {}
    : {
        pushNotifications: true,
        pushAllowedCidrs: process.env.PUSH_ALLOWED_CIDRS.split(','),
        pushClaimTtlMs: Number(process.env.PUSH_CLAIM_TTL_MS ?? 15000),
        pushPollIntervalMs: Number(process.env.PUSH_POLL_INTERVAL_MS ?? 250),
        pushThrottleMs: Number(process.env.PUSH_THROTTLE_MS ?? 1500),
        pushRetryDelaysMs: [200, 400, 800],
      }),
});
await serveAsChildProcess(app);
