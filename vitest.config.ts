import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Workspace packages resolve to their TypeScript sources through this export condition, so tests
// (and the demo, via `node --conditions`) run without a build step.
const conditions = ['@fastify-a2a/source'];

const project = (name: string, extra: Record<string, unknown> = {}) => ({
  extends: true as const,
  test: { name, root: `packages/${name}`, include: ['test/**/*.test.ts'], ...extra },
});

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Absolute: projects inherit this (extends: true) and would resolve a relative path against their own root.
    globalSetup: [fileURLToPath(new URL('./test-support/global-setup.ts', import.meta.url))],
    projects: [
      project('core'),
      project('store-memory'),
      project('store-sqlite'),
      project('store-postgres'),
      project('fastify'),
      project('grpc'),
      project('client'),
      project('ai-sdk'),
      project('langgraph'),
      // The demo as real child processes on each store (examples/demo/test).
      { extends: true as const, test: { name: 'demo', root: 'examples/demo', include: ['test/**/*.test.ts'] } },
    ],
  },
});
