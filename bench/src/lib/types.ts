/** The shape of bench/results/<date>.json. */

import type { RssReport } from '../servers/common.js';
import type { MachineInfo, RepoInfo } from './env.js';
import type { HttpLoadResult, StreamLoadResult } from './load.js';

export type ScenarioName = 'send' | 'send1' | 'grpc' | 'get' | 'streams';
export interface RunConfig {
  quick: boolean;
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

export interface ServerResult {
  name: string;
  label: string;
  /** sdk: @a2a-js/sdk 0.3.14 in memory; sdk-db: @a2a-js/sdk 1.3.0 with its DatabaseTaskStore. */
  kind: 'ceiling' | 'sdk' | 'sdk-db' | 'fastify-a2a';
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
  servers: ServerResult[];
}
