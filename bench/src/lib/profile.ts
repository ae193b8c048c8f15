/** Reads a V8 .cpuprofile and aggregates self (and inclusive) time by function + script. */

import { readFileSync } from 'node:fs';
import { SourceMap, type SourceMapPayload } from 'node:module';
import { REPO_DIR } from './env.js';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface FrameRow {
  name: string;
  location: string;
  selfUs: number;
  /** Share of all sampled time in the window. */
  selfPct: number;
  /** Share of non-idle time in the window. */
  busyPct: number;
}

export interface InclusiveRow {
  name: string;
  location: string;
  totalUs: number;
  busyPct: number;
}

export interface ProfileSummary {
  file: string;
  windowUs: number;
  /** Whether samples were restricted to the marked load window. */
  windowed: boolean;
  samples: number;
  idlePct: number;
  gcPct: number;
  top: FrameRow[];
  byFile: { location: string; busyPct: number }[];
  inclusive: InclusiveRow[];
}

/** `file:///work/main/packages/core/src/runtime.ts` → `packages/core/src/runtime.ts`; node internals as `node:…`. */
export function shortUrl(url: string): string {
  if (url === '') return '(native)';
  let path = url.replace(/^file:\/\//, '');
  const repo = `${REPO_DIR}/`;
  if (path.startsWith(repo)) path = path.slice(repo.length);
  const nm = path.lastIndexOf('node_modules/');
  if (nm >= 0) path = path.slice(nm);
  return path;
}

function frameKey(frame: CallFrame): string {
  return `${frame.functionName || '(anonymous)'}\u0000${frame.url}\u0000${frame.lineNumber}:${frame.columnNumber}`;
}

/** Source maps by module URL, written by the profiled child (tsx emits each module on one line). */
export type SourceMaps = Record<string, unknown>;

let sourceMaps = new Map<string, SourceMap>();

/** Where a frame is: the TypeScript line when a source map is known, else the generated line:column. */
function location(frame: CallFrame): string {
  const url = shortUrl(frame.url);
  if (frame.url === '') return url;
  const entry = sourceMaps.get(frame.url)?.findEntry(frame.lineNumber, frame.columnNumber) as
    | { originalLine?: number }
    | undefined;
  if (entry?.originalLine !== undefined) return `${url}:${entry.originalLine + 1}`;
  return `${url}:${frame.lineNumber + 1}:${frame.columnNumber + 1}`;
}

/**
 * Aggregates a profile. With `window` (µs on the same monotonic clock as the profile, i.e.
 * process.hrtime), only samples inside it count.
 */
export function summarizeProfile(
  file: string,
  window?: { start: number; end: number },
  maps: SourceMaps = {},
  topN = 15,
): ProfileSummary {
  sourceMaps = new Map(Object.entries(maps).map(([url, payload]) => [url, new SourceMap(payload as SourceMapPayload)]));
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  const usable =
    window !== undefined && window.start >= profile.startTime && window.end <= profile.endTime + 1_000_000
      ? window
      : undefined;

  const self = new Map<string, { frame: CallFrame; us: number }>();
  const inclusive = new Map<string, { frame: CallFrame; us: number }>();
  let total = 0;
  let idle = 0;
  let gc = 0;
  let samples = 0;
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i] ?? 0;
    if (usable && (t < usable.start || t > usable.end)) continue;
    // A sample's weight: the time until the next sample (the last one gets the previous delta).
    const us = profile.timeDeltas[i + 1] ?? profile.timeDeltas[i] ?? 0;
    const node = byId.get(profile.samples[i] as number);
    if (node === undefined) continue;
    samples++;
    total += us;
    const name = node.callFrame.functionName;
    if (name === '(idle)') idle += us;
    if (name === '(garbage collector)') gc += us;
    const key = frameKey(node.callFrame);
    const entry = self.get(key) ?? { frame: node.callFrame, us: 0 };
    entry.us += us;
    self.set(key, entry);
    // Inclusive: every distinct frame on the stack once.
    const seen = new Set<string>();
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const frame = (byId.get(id) as ProfileNode).callFrame;
      const k = frameKey(frame);
      if (seen.has(k)) continue;
      seen.add(k);
      const inc = inclusive.get(k) ?? { frame, us: 0 };
      inc.us += us;
      inclusive.set(k, inc);
    }
  }
  const busy = total - idle;
  const pct = (us: number, of: number) => (of > 0 ? (us / of) * 100 : 0);
  const rows = [...self.values()]
    .filter((e) => e.frame.functionName !== '(idle)')
    .sort((a, b) => b.us - a.us)
    .map(
      (e): FrameRow => ({
        name: e.frame.functionName || '(anonymous)',
        location: location(e.frame),
        selfUs: e.us,
        selfPct: pct(e.us, total),
        busyPct: pct(e.us, busy),
      }),
    );
  const files = new Map<string, number>();
  for (const e of self.values()) {
    if (e.frame.functionName === '(idle)') continue;
    const loc = e.frame.url === '' ? `(native) ${e.frame.functionName}` : shortUrl(e.frame.url);
    files.set(loc, (files.get(loc) ?? 0) + e.us);
  }
  const inclusiveRows = [...inclusive.values()]
    .filter((e) => e.frame.url.includes('/packages/') || e.frame.url.includes('/examples/'))
    .sort((a, b) => b.us - a.us)
    .slice(0, 25)
    .map(
      (e): InclusiveRow => ({
        name: e.frame.functionName || '(anonymous)',
        location: location(e.frame),
        totalUs: e.us,
        busyPct: pct(e.us, busy),
      }),
    );
  return {
    file,
    windowUs: total,
    windowed: usable !== undefined,
    samples,
    idlePct: pct(idle, total),
    gcPct: pct(gc, busy),
    top: rows.slice(0, topN),
    byFile: [...files.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 20)
      .map(([loc, us]) => ({ location: loc, busyPct: pct(us, busy) })),
    inclusive: inclusiveRows,
  };
}

export function renderProfileSummary(summary: ProfileSummary): string {
  const lines: string[] = [];
  lines.push(
    `Profile ${shortUrl(summary.file)}: ${(summary.windowUs / 1e6).toFixed(2)} s ${summary.windowed ? 'of the marked load window' : 'of the whole process (no usable marks)'}, ${summary.samples} samples; idle ${summary.idlePct.toFixed(1)}%, GC ${summary.gcPct.toFixed(1)}% of busy time.`,
  );
  lines.push('');
  lines.push('| # | function | where | self % of busy | self % of window |');
  lines.push('| ---: | --- | --- | ---: | ---: |');
  summary.top.forEach((row, i) => {
    lines.push(
      `| ${i + 1} | \`${row.name}\` | ${row.location} | ${row.busyPct.toFixed(1)}% | ${row.selfPct.toFixed(1)}% |`,
    );
  });
  lines.push('');
  lines.push('Self time by script (% of busy):');
  lines.push('');
  lines.push('| script | self % |');
  lines.push('| --- | ---: |');
  for (const row of summary.byFile) lines.push(`| ${row.location} | ${row.busyPct.toFixed(1)}% |`);
  lines.push('');
  lines.push('Inclusive time of fastify-a2a functions (% of busy; a function appears once per sample):');
  lines.push('');
  lines.push('| function | where | inclusive % |');
  lines.push('| --- | --- | ---: |');
  for (const row of summary.inclusive) lines.push(`| \`${row.name}\` | ${row.location} | ${row.busyPct.toFixed(1)}% |`);
  lines.push('');
  return lines.join('\n');
}
