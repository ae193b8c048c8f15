/**
 * The adapter turns a graph run into calls on the executor contract and nothing else: from this
 * repository it imports `@fastify-a2a/core` (the contract and the model), its agent kit, and the
 * client (for `a2aTool`); never the plugin, a store, or the runtime. Read from source.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const src = fileURLToPath(new URL('../src/', import.meta.url));
const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
};

function importsOf(file: string): string[] {
  const text = readFileSync(join(src, file), 'utf8');
  return [...text.matchAll(/^(?:import|export)\s[^;]*?from\s+'([^']+)'/gms)].map((m) => m[1] as string);
}

describe('@fastify-a2a/langgraph layering', () => {
  const files = readdirSync(src).filter((f) => f.endsWith('.ts'));
  const external = files.flatMap((file) =>
    importsOf(file)
      .filter((s) => !s.startsWith('.'))
      .map((s) => ({ file, s })),
  );

  it('imports fastify-a2a packages through the executor contract, its kit and the client only', () => {
    const own = external.filter(({ s }) => s === 'fastify-a2a' || s.startsWith('@fastify-a2a/'));
    expect(own.length).toBeGreaterThan(0);
    expect(
      own.filter(({ s }) => !['@fastify-a2a/core', '@fastify-a2a/core/agent-kit', '@fastify-a2a/client'].includes(s)),
    ).toEqual([]);
  });

  it('takes LangGraph and LangChain as peer dependencies, never as its own', () => {
    const frameworks = new Set(external.map(({ s }) => s).filter((s) => s.startsWith('@langchain/')));
    expect([...frameworks].sort()).toEqual([
      '@langchain/core/messages',
      '@langchain/core/tools',
      '@langchain/langgraph',
    ]);
    expect(Object.keys(manifest.peerDependencies ?? {})).toEqual(
      expect.arrayContaining(['@fastify-a2a/core', '@langchain/core', '@langchain/langgraph']),
    );
    expect(Object.keys(manifest.dependencies ?? {}).filter((d) => d.startsWith('@langchain/'))).toEqual([]);
  });
});
