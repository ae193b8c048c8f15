/** The shape of bench/results/<date>.json. */

import type { RssReport } from '../servers/common.js';
import type { MachineInfo, RepoInfo } from './env.js';
import type { HttpLoadResult, StreamLoadResult } from './load.js';

export type ScenarioName = 'send' | 'send1' | 'grpc' | 'get' | 'streams';
/** The scenarios measured in alternating rounds (the ones the throughput targets are judged by). */
export type RoundScenario = 'send' | 'get';
export interface RunConfig {
  quick: boolean;
  /** Alternating rounds: every server of the run measured once per round, in the same order (absent in older results). */
  rounds?: number;
  warmupS: number;
  durationS: number;
  connections: number;
  streams: number;
  holdMs: number;
  openConcurrency: number;
  echoText: string;
}

export interface RssSample {
  /** ms since the start of the measured window. */
  t: number;
  rss: number;
}

export interface SendResult {
  load: HttpLoadResult;
  before: RssReport;
  after: RssReport;
  /** VmRSS sampled every 250 ms during the measured window and the sustain window (not the warm-up). */
  timeline: RssSample[];
  /**
   * A second window of the same load right after the measured one: memory after it (after a GC),
   * compared with `after`, says whether memory is flat under sustained load.
   */
  sustain?: { load: HttpLoadResult; after: RssReport };
  /** Postgres only: average active store backends per wait event (pg_stat_activity) in the measured window. */
  postgresWaits?: Record<string, number>;
}

export interface GetResult {
  load: HttpLoadResult;
  before: RssReport;
  after: RssReport;
}

export interface StreamsResult {
  load: StreamLoadResult;
  holdMs: number;
  before: RssReport;
  /** Measured (after a GC) with every stream that opened still open. */
  whileOpen: RssReport | undefined;
  /** Largest VmRSS seen during the scenario. */
  peakRss: number;
  after: RssReport;
}

/** Server CPU over one measured window, from /proc/<pid>/stat (the server process only: not a database server's). */
export interface ServerCpu {
  userMs: number;
  systemMs: number;
  /** (user + system) / responses completed in the window. */
  perRequestMs: number;
}

/** One measured load window of a round, with the server's CPU over it. */
export interface WindowResult {
  load: HttpLoadResult;
  cpu: ServerCpu;
}

export interface RoundServerResult {
  name: string;
  label: string;
  kind: ServerResult['kind'];
  send?: WindowResult;
  get?: WindowResult;
  error?: string;
}

/** One round: every server, one after another, each a freshly started process. */
export interface RoundResult {
  round: number;
  servers: RoundServerResult[];
  /** The machine's 1-minute load average when the round started and ended. */
  loadAvg: { start: number; end: number };
  wallMs: number;
}

/**
 * How a fastify-a2a server is configured: shipped is the demo as `npm start` runs it (its push
 * options, push on) with the pino logger at `warn`; bare is logger off, push off; info is shipped
 * with Fastify's request logs at `info`; telemetry is shipped with the plugin's metrics on and the
 * OpenTelemetry SDK installed with no exporter (bench/src/servers/tracing.ts).
 */
export type Configuration = 'shipped' | 'bare' | 'info' | 'telemetry';

export interface ServerResult {
  name: string;
  label: string;
  /**
   * sdk: @a2a-js/sdk 0.3.14 in memory; sdk-db: @a2a-js/sdk 1.3.0 with its DatabaseTaskStore;
   * minimal: the minimal A2A server on Fastify (bench/src/servers/minimal.ts).
   */
  kind: 'ceiling' | 'minimal' | 'sdk' | 'sdk-db' | 'fastify-a2a';
  /** fastify-a2a only (absent in older results, which measured the bare configuration). */
  configuration?: Configuration;
  /** The settings the server reported it runs with (the SDK peer's database settings). */
  settings?: Record<string, string>;
  startup?: RssReport;
  end?: RssReport;
  send?: SendResult;
  /** fastify-a2a only: the same blocking send as A2A 1.0's SendMessage (A2A-Version: 1.0). */
  send1?: GetResult;
  /** fastify-a2a only: the same A2A 1.0 SendMessage over gRPC, on the same process (@fastify-a2a/grpc). */
  grpc?: GetResult;
  get?: GetResult;
  streams?: StreamsResult;
  error?: string;
  /** The machine's 1-minute load average when this server's scenarios started and ended (others share it). */
  loadAvg?: { start: number; end: number };
  /** Wall time of this server's scenarios, ms. */
  wallMs?: number;
}

export interface RunResult {
  kind: 'run';
  date: string;
  machine: MachineInfo;
  repo: RepoInfo;
  config: RunConfig;
  /** The Postgres server's commit-related settings. */
  postgres: Record<string, string> | undefined;
  /** The once-per-server scenarios (sustained load, the 1.0 codec, gRPC, held streams). */
  servers: ServerResult[];
  /** The alternating rounds of send and get (absent in older results). */
  rounds?: RoundResult[];
}
