#!/usr/bin/env node
/**
 * The root `prepare` script (run by `npm install` and `npm ci`): compiles @fastify-a2a/core and
 * @fastify-a2a/client, so that the workspace's `a2a` bin — plain JavaScript running the client's
 * dist/ — works right after an install (`npm exec a2a -- card get URL`).
 *
 * Skipped, saying so, where there is nothing to build with: an install without the sources (the
 * demo image's dependency layer copies only the manifests) or without TypeScript
 * (`npm ci --omit=dev`).
 */

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const sources = ['core', 'client'].map((name) => join(root, 'packages', name, 'src', 'index.ts'));
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');

if (!sources.every((file) => existsSync(file)) || !existsSync(tsc)) {
  console.log('[prepare] no sources or no TypeScript here: the a2a CLI is not built (npm run build builds it).');
} else {
  const result = spawnSync('npm', ['run', 'build', '-w', 'packages/core', '-w', 'packages/client'], {
    cwd: root,
    stdio: 'inherit',
  });
  process.exitCode = result.status ?? 1;
}
