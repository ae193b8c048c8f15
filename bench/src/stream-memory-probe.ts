/**
 * Where a held stream's memory goes, by store: the compiled bench server (as `npm run bench` runs
 * it, the demo as shipped unless --bare) with N `message/stream` requests of `sleep:<hold>` held
 * open at once, probed before and with all open (after a full GC): process.memoryUsage(), V8's heap
 * spaces, the malloc heap and anonymous mappings (/proc/<pid>/smaps), all per stream open.
 *
 *   node --conditions=@fastify-a2a/source --import tsx bench/src/stream-memory-probe.ts \
 *     <memory|postgres|sqlite> <streams> [--snapshot] [--alloc] [--trace-gc] [--queries] [--bare]
 *
 * --snapshot: heap snapshots (after 200 short warm-up streams) diffed by constructor: what is live
 * per stream. --alloc: a sampling allocation profile between the two probes, dead objects
 * included: what opening the streams allocated, by file and frame. --trace-gc: bytes promoted by
 * scavenges while opening (what later fragments the old generation). --queries: the pg queries
 * per stream and the deepest pool queue (its own text handling shows up in --alloc). The hold is
 * 3 s + 3 ms per stream as in the bench; PROBE_HOLD_MS sets it (longer on a loaded machine, so that
 * all are open at once). A Postgres schema of its own, dropped at the end.
 *
 * The child gets a preload that answers SIGUSR2 by writing those figures to a file: no change to
 * the server entry, so what is measured is the server the bench measures.
 */

import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { compiledEntry } from './lib/child.js';
import { BENCH_DIR, dropSchema, POSTGRES_URL } from './lib/env.js';
import { streamLoad } from './lib/load.js';

const [storeName = 'memory', countText = '2000', ...flags] = process.argv.slice(2);
const streams = Number(countText);
const snapshot = flags.includes('--snapshot');
const bare = flags.includes('--bare');
const holdMs = Number(process.env.PROBE_HOLD_MS ?? Math.max(4000, 3000 + streams * 3));
const dir = mkdtempSync(join(tmpdir(), 'stream-memory-'));

const PRELOAD = `
import v8 from 'node:v8';
import { readFileSync, writeFileSync } from 'node:fs';
let probe = 0;
// PROBE_ALLOC=1: a sampling allocation profile between the first two probes, dead objects included.
import inspector from 'node:inspector';
const session = process.env.PROBE_ALLOC === '1' ? new inspector.Session() : undefined;
session?.connect();
const post = (method, params) => new Promise((resolve, reject) => session.post(method, params ?? {}, (e, r) => (e ? reject(e) : resolve(r))));
// What the store asks of pg: queries by statement (first words) and the deepest pool queue.
const queries = new Map();
let maxWaiting = 0;
if (process.env.PROBE_QUERIES === '1') try {
  const { createRequire } = await import('node:module');
  const pg = createRequire(process.cwd() + '/x.js')('pg');
  const query = pg.Pool.prototype.query;
  pg.Pool.prototype.query = function (text, ...rest) {
    const sql = (typeof text === 'string' ? text : text.text).replace(/\\s+/g, ' ').trim().slice(0, 60);
    queries.set(sql, (queries.get(sql) ?? 0) + 1);
    maxWaiting = Math.max(maxWaiting, this.waitingCount);
    return query.call(this, text, ...rest);
  };
  const clientQuery = pg.Client.prototype.query;
  pg.Client.prototype.query = function (text, ...rest) {
    if (this.pipeline) {
      const sql = 'lane: ' + (typeof text === 'string' ? text : text.text).replace(/\\s+/g, ' ').trim().slice(0, 54);
      queries.set(sql, (queries.get(sql) ?? 0) + 1);
    }
    return clientQuery.call(this, text, ...rest);
  };
} catch {}
process.on('SIGUSR2', async () => {
  globalThis.gc?.(); globalThis.gc?.();
  const n = probe++;
  const smaps = readFileSync('/proc/self/smaps', 'utf8');
  let brk = 0, anon = 0, current = '';
  for (const line of smaps.split('\\n')) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) { current = line; continue; }
    const m = /^Rss:\\s+(\\d+) kB/.exec(line);
    if (!m) continue;
    const kb = Number(m[1]);
    if (current.endsWith('[heap]')) brk += kb;
    else if (!/\\//.test(current) && !current.includes('[')) anon += kb;
  }
  const out = { memory: process.memoryUsage(), spaces: v8.getHeapSpaceStatistics(), brkKb: brk, anonKb: anon,
    heap: v8.getHeapStatistics(), queries: Object.fromEntries(queries), maxWaiting };
  queries.clear(); maxWaiting = 0;
  if (session && n === 0) await post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  if (session && n === 1) { const { profile } = await post('HeapProfiler.stopSampling'); out.alloc = process.env.PROBE_DIR + '/alloc.json'; writeFileSync(out.alloc, JSON.stringify(profile)); }
  if (process.env.PROBE_SNAPSHOT === '1') out.snapshot = v8.writeHeapSnapshot(process.env.PROBE_DIR + '/s' + n + '.heapsnapshot');
  writeFileSync(process.env.PROBE_DIR + '/p' + n + '.json', JSON.stringify(out));
});
`;
writeFileSync(join(dir, 'preload.mjs'), PRELOAD);

let storeUrl = 'memory:';
let schema: string | undefined;
if (storeName === 'postgres') {
  schema = `bench_probe_${Math.random().toString(36).slice(2, 8)}`;
  const url = new URL(POSTGRES_URL);
  url.searchParams.set('schema', schema);
  storeUrl = url.toString();
} else if (storeName === 'sqlite') {
  storeUrl = `sqlite:${join(dir, 'probe.db')}`;
}

interface Probe {
  memory: NodeJS.MemoryUsage;
  spaces: { space_name: string; space_size: number; space_used_size: number }[];
  brkKb: number;
  anonKb: number;
  snapshot?: string;
  alloc?: string;
  queries: Record<string, number>;
  maxWaiting: number;
}

const entry = await compiledEntry('fastify-a2a.ts');
const traceGc = flags.includes('--trace-gc');
const child = spawn(
  process.execPath,
  ['--expose-gc', ...(traceGc ? ['--trace-gc-nvp'] : []), '--import', join(dir, 'preload.mjs'), entry],
  {
    cwd: BENCH_DIR,
    stdio: ['ignore', traceGc ? 'pipe' : 'ignore', 'inherit', 'ipc'],
    env: {
      ...process.env,
      PROBE_ALLOC: flags.includes('--alloc') ? '1' : '0',
      PROBE_QUERIES: flags.includes('--queries') ? '1' : '0',
      BENCH_STORE: storeUrl,
      PROBE_DIR: dir,
      PROBE_SNAPSHOT: snapshot ? '1' : '0',
      ...(bare ? {} : { BENCH_PUSH: 'on', BENCH_LOG_LEVEL: 'warn' }),
    },
  },
);
const port = await new Promise<number>((resolve) =>
  child.on('message', (m: { type: string; port?: number }) => m.type === 'ready' && resolve(m.port ?? 0)),
);

// With --trace-gc: bytes promoted to the old generation by scavenges (what fragments it later), summed between probes.
let promoted = 0;
let scavenges = 0;
let markCompacts = 0;
let pendingLine = '';
child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
  const lines = (pendingLine + chunk).split('\n');
  pendingLine = lines.pop() ?? '';
  for (const line of lines) {
    const kind = /gc=(\w+)/.exec(line)?.[1];
    if (kind === 's') scavenges++;
    else if (kind === 'mc' || kind === 'ms') markCompacts++;
    const p = /promoted=(\d+)/.exec(line);
    if (p && kind === 's') promoted += Number(p[1]);
  }
});

let probes = 0;
async function probe(): Promise<Probe> {
  const file = join(dir, `p${probes++}.json`);
  child.kill('SIGUSR2');
  while (!existsSync(file)) await sleep(100);
  await sleep(200);
  return JSON.parse(readFileSync(file, 'utf8')) as Probe;
}

const body = (tag: string, text: string) => (i: number) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id: i,
    method: 'message/stream',
    params: { message: { kind: 'message', messageId: `${tag}-${i}`, role: 'user', parts: [{ kind: 'text', text }] } },
  });

try {
  const run = Math.random().toString(36).slice(2, 8);
  // Warm-up (only for snapshots: code and caches then belong to "before").
  if (snapshot) {
    await streamLoad({
      port,
      streams: 200,
      openConcurrency: 64,
      timeoutMs: 60_000,
      body: body(`w${run}`, 'sleep:10'),
      onAllOpen: async () => {},
    });
  }
  const before = await probe();
  promoted = 0;
  scavenges = 0;
  markCompacts = 0;
  let open: Probe | undefined;
  const load = await streamLoad({
    port,
    streams,
    openConcurrency: 256,
    timeoutMs: holdMs + 120_000,
    body: body(`s${run}`, `sleep:${holdMs}`),
    onAllOpen: async () => {
      if (traceGc)
        console.log(
          `promoted by scavenges while opening: ${(promoted / streams / 1024).toFixed(2)} KB/stream (${scavenges} scavenges, ${markCompacts} mark-compacts)`,
        );
      open = await probe();
    },
  });
  if (open === undefined) throw new Error('never all open');
  const per = (a: number, b: number) => ((b - a) / load.openAtMeasure / 1024).toFixed(2);
  const m0 = before.memory;
  const m1 = open.memory;
  console.log(
    `${storeName}${bare ? '-bare' : ''} ${load.openAtMeasure} of ${streams} open at once (${load.opened} opened) in ${load.openMs.toFixed(0)} ms, ${load.finals} finals, ${load.errors} errors`,
  );
  console.log(
    `KB/stream: rss ${per(m0.rss, m1.rss)} heapUsed ${per(m0.heapUsed, m1.heapUsed)} heapTotal ${per(m0.heapTotal, m1.heapTotal)} ` +
      `non-heap (rss-heapTotal) ${per(m0.rss - m0.heapTotal, m1.rss - m1.heapTotal)} brk ${per(before.brkKb * 1024, open.brkKb * 1024)} anon ${per(before.anonKb * 1024, open.anonKb * 1024)}`,
  );
  console.log(`pg pool: deepest queue ${open.maxWaiting}; queries per stream:`);
  for (const [sql, n] of Object.entries(open.queries).sort((x, y) => y[1] - x[1]))
    console.log(`  ${(n / load.opened).toFixed(2).padStart(6)}  ${sql}`);
  for (const space of open.spaces) {
    const b = before.spaces.find((s) => s.space_name === space.space_name);
    if (!b) continue;
    console.log(
      `  ${space.space_name.padEnd(26)} size ${per(b.space_size, space.space_size).padStart(7)} used ${per(b.space_used_size, space.space_used_size).padStart(7)}`,
    );
  }
  if (open.alloc) {
    interface AllocNode {
      callFrame: { functionName: string; url: string; lineNumber: number };
      selfSize: number;
      children: AllocNode[];
    }
    const { head } = JSON.parse(readFileSync(open.alloc, 'utf8')) as { head: AllocNode };
    const self = new Map<string, number>();
    const byFile = new Map<string, number>();
    let total = 0;
    const walk = (node: AllocNode, stack: string[]) => {
      const f = node.callFrame;
      const here = `${f.functionName || '(anon)'} ${f.url.replace(/.*node_modules\//, '').replace(/.*\/dist\//, '')}:${f.lineNumber + 1}`;
      const path = [...stack, here];
      if (node.selfSize > 0) {
        total += node.selfSize;
        const key = path.slice(-3).join(' < ');
        self.set(key, (self.get(key) ?? 0) + node.selfSize);
        const file =
          f.url
            .replace(/.*node_modules\//, '')
            .split('/')
            .slice(0, 2)
            .join('/') || '(native)';
        byFile.set(file, (byFile.get(file) ?? 0) + node.selfSize);
      }
      for (const child of node.children) walk(child, path);
    };
    walk(head, []);
    const kb = (bytes: number) => (bytes / load.openAtMeasure / 1024).toFixed(2);
    console.log(`allocated (sampled, dead included) while opening: ${kb(total)} KB/stream; by file:`);
    for (const [file, bytes] of [...byFile].sort((a, b) => b[1] - a[1]).slice(0, 15))
      console.log(`  ${kb(bytes).padStart(7)}  ${file}`);
    console.log('by frame (self, with two callers):');
    for (const [key, bytes] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 40))
      console.log(`  ${kb(bytes).padStart(7)}  ${key.slice(-200)}`);
  }
  if (snapshot && before.snapshot && open.snapshot) {
    const counts = (file: string) => {
      const s = JSON.parse(readFileSync(file, 'utf8'));
      const fields: string[] = s.snapshot.meta.node_fields;
      const types: string[] = s.snapshot.meta.node_types[0];
      const width = fields.length;
      const [iType, iName, iSize] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f)) as [
        number,
        number,
        number,
      ];
      const byKey = new Map<string, { count: number; size: number }>();
      for (let i = 0; i < s.nodes.length; i += width) {
        const type = types[s.nodes[i + iType]];
        const name = type === 'object' || type === 'closure' ? s.strings[s.nodes[i + iName]] : `(${type})`;
        const key = `${type}:${name}`;
        const entry = byKey.get(key) ?? { count: 0, size: 0 };
        entry.count++;
        entry.size += s.nodes[i + iSize];
        byKey.set(key, entry);
      }
      return byKey;
    };
    const a = counts(before.snapshot);
    const b = counts(open.snapshot);
    const rows = [...b].map(([key, v]) => {
      const w = a.get(key) ?? { count: 0, size: 0 };
      return { key, count: (v.count - w.count) / load.openAtMeasure, bytes: (v.size - w.size) / load.openAtMeasure };
    });
    rows.sort((x, y) => y.bytes - x.bytes);
    console.log('per stream, by constructor (count, bytes):');
    for (const row of rows.slice(0, 45))
      console.log(`  ${row.count.toFixed(2).padStart(7)} ${row.bytes.toFixed(0).padStart(6)}  ${row.key.slice(0, 90)}`);
    console.log(`  total ${rows.reduce((t, r) => t + r.bytes, 0).toFixed(0)} bytes`);
  }
} finally {
  child.send({ type: 'shutdown' });
  await new Promise((resolve) => child.once('exit', resolve));
  if (schema) await dropSchema(schema).catch((error) => console.error(`could not drop ${schema}: ${error.message}`));
  rmSync(dir, { recursive: true, force: true });
}
