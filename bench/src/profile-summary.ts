/**
 * `npm run bench:profile-summary -- [file.cpuprofile] [marks.json]`: the top self-time frames of a
 * CPU profile, as markdown. Without arguments, the newest main-thread profile in bench/profiles
 * and the marks file written with it (BENCH_PROFILE=1 npm run bench writes both).
 */

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_DIR } from './lib/env.js';
import { renderProfileSummary, type SourceMaps, summarizeProfile } from './lib/profile.js';

const dir = join(BENCH_DIR, 'profiles');
let [file, marksFile] = process.argv.slice(2);
if (file === undefined) {
  const candidates = existsSync(dir)
    ? readdirSync(dir)
        .filter((name) => /^CPU\..*\.\d+\.0\.\d+\.cpuprofile$/.test(name))
        .map((name) => join(dir, name))
        .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)
    : [];
  file = candidates[0];
  if (file === undefined) {
    console.error('No main-thread .cpuprofile in bench/profiles; run `BENCH_PROFILE=1 npm run bench` first.');
    process.exit(1);
  }
  const pid = /\.(\d+)\.0\.\d+\.cpuprofile$/.exec(file)?.[1];
  const guess = join(dir, `marks-${pid}.json`);
  if (marksFile === undefined && existsSync(guess)) marksFile = guess;
}
let window: { start: number; end: number } | undefined;
let sourceMaps: SourceMaps = {};
if (marksFile !== undefined) {
  const written = JSON.parse(readFileSync(marksFile, 'utf8')) as {
    marks: Record<string, number>;
    sourceMaps?: SourceMaps;
  };
  const { marks } = written;
  if (marks.start !== undefined && marks.end !== undefined) window = { start: marks.start, end: marks.end };
  sourceMaps = written.sourceMaps ?? {};
}
console.log(renderProfileSummary(summarizeProfile(file, window, sourceMaps)));
