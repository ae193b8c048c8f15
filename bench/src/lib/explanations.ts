/**
 * Why a target the run missed is missed: the evidence RESULTS.md gives under its targets table.
 * Numbers from this run are filled in; the per-send CPU and the profile come from bench/RUNTIME.md
 * (`npm run bench:runtime`) and bench/PROFILE.md (`BENCH_PROFILE=1 npm run bench`), which say how
 * they were made.
 */

import { medianRate, summarize } from './rounds.js';
import type { RunResult } from './types.js';

export type TargetKind =
  | 'get-ceiling'
  | 'get-minimal'
  | 'send-minimal'
  | 'cpu-send'
  | 'send-memory'
  | 'send-sqlite'
  | 'send-sqlite-peer'
  | 'send-postgres'
  | 'send-postgres-peer'
  | 'streams'
  | 'rss'
  | 'telemetry';

/**
 * What the SDK peer writes per blocking send of the echo agent, from @a2a-js/sdk 1.3.0's
 * `ResultManager` (dist/server/index.js): each of the executor's events (the task, working, 5
 * artifact chunks, completed) is a `load` and a `save` of the whole task, one after another.
 */
const PEER_WRITES =
  "The SDK's request handler stores each of the executor's 8 events as a SELECT of the task and an INSERT … ON CONFLICT DO UPDATE of the whole row (its JSON columns growing with every artifact chunk), one after another: 8 single-statement write transactions per send, with no event log, message index or queue; fastify-a2a writes one per send (the task, its 8 log events and the message index entry: bench/WRITES.md counts them), which also keeps the versioned event log that streams on any worker resume from.";

const x = (value: number | undefined): string => (value === undefined ? '?' : `${value.toFixed(2)}×`);

export function whyMissed(kind: TargetKind, result: RunResult): string | undefined {
  const by = (name: string) => result.servers.find((s) => s.name === name);
  // The medians of the alternating rounds; a result written before the rounds has one window per server.
  const rps = (name: string, key: 'send' | 'get') =>
    result.rounds?.length ? medianRate(result, name, key) : by(name)?.[key]?.load.reqPerSec;
  const ratio = (a: number | undefined, b: number | undefined) =>
    a === undefined || b === undefined || b === 0 ? undefined : a / b;
  const sdkOfCeiling = ratio(rps('sdk', 'send'), rps('ceiling', 'send'));
  switch (kind) {
    case 'get-ceiling':
    case 'get-minimal':
    case 'send-minimal':
    case 'cpu-send':
      return [
        `**The edge** (memory tasks/get ${x(ratio(rps('memory', 'get'), rps('ceiling', 'get')))} the raw-Fastify ceiling and ${x(ratio(rps('memory', 'get'), rps('minimal', 'get')))} the minimal A2A server; message/send ${x(ratio(rps('memory', 'send'), rps('minimal', 'send')))} the minimal server).`,
        'The minimal server does the same store work (a Map) and the same JSON parse and stringify; what fastify-a2a adds is the path around them: hooks, envelope and params validation, authorisation and capability gates, dispatch, the codec, the event log and message index, and for a send the turn. bench/PROFILE.md (`npm run bench:edge`) has that path per stage.',
      ].join(' ');
    case 'send-memory': {
      const ours = result.rounds?.length ? summarize(result, 'memory', 'send') : undefined;
      const sdk = result.rounds?.length ? summarize(result, 'sdk', 'send') : undefined;
      const speed = ratio(ours?.reqPerSec, sdk?.reqPerSec);
      if (speed !== undefined && speed >= 3 && ours && sdk) {
        return [
          `**memory message/send p99** (median ${ours.p99Ms} ms against the SDK's ${sdk.p99Ms} ms, ${x(ratio(ours.p99Ms, sdk.p99Ms))}, while the throughput part is met at ${x(speed)}).`,
          'autocannon reports whole milliseconds, so with a tail of a few milliseconds the margin is one or two of them.',
          'The tail of a blocking send is mostly garbage-collection pauses (about an eighth of busy time in bench/PROFILE.md) with 64 requests in flight on two cores shared with the load generator.',
        ].join(' ');
      }
      return [
        `**memory message/send.** In this run the SDK's message/send is ${x(sdkOfCeiling)} the raw-Fastify ceiling, so 3× the SDK means ${x(sdkOfCeiling === undefined ? undefined : 3 * sdkOfCeiling)} the ceiling, while fastify-a2a's own tasks/get (one store read and one response) reaches ${x(ratio(rps('memory', 'get'), rps('ceiling', 'get')))} of it.`,
        'A blocking message/send does strictly more per request: it validates the message, creates the task, runs the agent (7 updates checked against the task), reads the message index (a retry must not run the agent twice) and writes one versioned commit with an 8-event log that streams on any worker can resume from (the SDK keeps no log), and answers with a larger body.',
        'bench/PROFILE.md shows where the rest goes: socket writes and the garbage collector are the largest single frames, each about an eighth of busy time; the load generator takes a share of the same two cores.',
      ].join(' ');
    }
    case 'send-sqlite':
      return [
        `**SQLite message/send** (${x(ratio(rps('sqlite', 'send'), rps('sdk', 'send')))} the SDK).`,
        'Every send is one SQLite write transaction (the task, its 8 log events and its message index entry; sends queued at the same moment share one), appending every page it touched to the WAL: bench/WRITES.md counts the statements, rows and WAL bytes per send.',
        'better-sqlite3 runs every statement synchronously on the event loop, so that work is added to the same thread that parses, runs the agent and answers, where the SDK keeps its tasks in memory and writes nothing; the WAL checkpoints run on a worker thread of the store.',
      ].join(' ');
    case 'send-sqlite-peer':
      return [
        `**SQLite message/send against the SDK's DatabaseTaskStore** (${x(ratio(rps('sqlite', 'send'), rps('sdk-sqlite', 'send')))} of it, each on its own file with the same pragmas).`,
        PEER_WRITES,
        "With WAL and synchronous=NORMAL no commit waits for an fsync, so the count of commits weighs less than the work around them: both run SQLite synchronously on the event loop, and the rest is JSON, HTTP and (for fastify-a2a) the log; bench/RUNTIME.md measures fastify-a2a's CPU per send.",
      ].join(' ');
    case 'send-postgres-peer':
      return [
        `**Postgres message/send against the SDK's DatabaseTaskStore** (${x(ratio(rps('postgres', 'send'), rps('sdk-postgres', 'send')))} of it, same server, same pool size).`,
        PEER_WRITES,
        "Postgres flushes the WAL of commits that wait at the same moment together (one flush covers every commit written before it), so with 10 connections committing at once the peer's 8 commits per send share flushes; the wait events under the message/send table show where each spends its time.",
      ].join(' ');
    case 'send-postgres':
      return [
        `**Postgres message/send** (${x(ratio(rps('postgres', 'send'), rps('sdk', 'send')))} the SDK).`,
        'Every send is a read of the message index and one single-statement transaction with a synchronous commit (the task, its 8 log events and the index entry; bench/WRITES.md counts the rows, index entries and WAL bytes), and a NOTIFY shared by the commits of the moment.',
        "bench/RUNTIME.md measures the Postgres server's CPU per send apart from the worker's: together they need more CPU per send than the SDK's whole in-memory request, and this machine's two cores also run the load generator.",
        "The result is durable and shared by every worker; a deployment with Postgres on its own machine adds the database's cores.",
      ].join(' ');
    case 'streams':
      return [
        "**Held streams.** A held stream costs the Fastify request and reply, the SSE context, the task with its log in the store, the running turn with its AbortSignal (the agent sleeps on it) and the paused agent, the stream's reader, and the socket; the raw-Fastify ceiling row shows what the HTTP and SSE part alone costs.",
        "The heap per stream is at or below the SDK's; RSS also keeps what the heap and allocators grew to while 10,000 streams opened, which the GC does not return.",
        'With Postgres the live objects per stream are the same (a heap snapshot diff finds nothing of pg\'s kept per stream); the extra RSS is what opening thousands at once leaves behind: heap pages V8 keeps unused and a larger malloc heap, grown by the garbage of about four pool queries and two pipelined commits per stream (bench/PROFILE.md, "Held streams").',
      ].join(' ');
    case 'rss': {
      const notes: string[] = [];
      for (const name of ['memory', 'sqlite', 'postgres']) {
        const send = by(name)?.send;
        if (!send?.sustain) continue;
        const [a, b] = [send.after, send.sustain.after];
        const rssPct = ((b.rss - a.rss) / a.rss) * 100;
        if (rssPct <= 10) continue;
        const heapPct = ((b.heapUsed - a.heapUsed) / a.heapUsed) * 100;
        const peak = Math.max(...send.timeline.map((sample) => sample.rss));
        notes.push(
          `${name}: RSS after GC ${rssPct.toFixed(1)} % while the live heap moved ${heapPct.toFixed(1)} % and external memory ${(((b.external - a.external) / Math.max(1, a.external)) * 100).toFixed(1)} %; the RSS after GC (${(b.rss / 1048576).toFixed(1)} MB) stays below the ${(peak / 1048576).toFixed(1)} MB the process reached under load`,
        );
      }
      return [
        `**RSS growth** (${notes.join('; ')}).`,
        'What the store keeps is bounded (`maxTasks` for the memory store, retention for all) and the live heap after GC is flat: the RSS that moves is memory the allocators kept after the load peak, which the GC does not hand back.',
        'Two earlier full runs today, on nearly the same code, measured −17 % and +6 % here: this verdict flips from run to run.',
      ].join(' ');
    }
    case 'telemetry':
      return [
        `**Metrics + tracing** (memory-telemetry, message/send at ${x(ratio(rps('memory-telemetry', 'send'), rps('memory', 'send')))} memory's rate).`,
        "Metrics alone cost less than the noise; the cost is tracing: one SERVER span and one context switch per request, and on Node 20 that one switch (which lets the agent's spans nest under the operation's) turns on AsyncLocalStorage's promise hooks for every promise of the process, about half the CPU added; the SDK's span work is most of the rest.",
        'bench/TELEMETRY.md (`npm run bench:telemetry`) measures each share on its own and what a sampler saves.',
      ].join(' ');
    default:
      return undefined;
  }
}
