/**
 * The protocol layer sits below the runtime: it defines the service it calls (`A2AService`) and
 * names neither the runtime, the store contract nor push delivery — not even as a type, since a
 * type import is how the protocol ↔ runtime loop began. Read from source, so a new import that
 * crosses the line fails here before it ships.
 */

import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const src = fileURLToPath(new URL('../../src/', import.meta.url));

/** What a protocol file may import from core, outside `protocol/`: the layers below it. */
const BELOW_PROTOCOL = /^(model\/.*|errors\.ts|json\.ts|logger\.ts|telemetry\.ts)$/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Every relative module `text` (the source of `file`) imports or re-exports, type-only ones included, relative to `src`. */
function importsIn(text: string, file: string): string[] {
  const specifiers = [
    ...text.matchAll(/^(?:import|export)\s[^;]*?from\s+'(\.[^']+)'/gms),
    ...text.matchAll(/import\(\s*'(\.[^']+)'\s*\)/g),
  ].map((match) => match[1] as string);
  return specifiers.map((specifier) => relative(src, resolve(dirname(file), specifier.replace(/\.js$/, '.ts'))));
}

function relativeImports(file: string): string[] {
  return importsIn(readFileSync(file, 'utf8'), file);
}

/** Whether a protocol file importing `target` leaves the layer for one above it. */
function climbsFromProtocol(target: string): boolean {
  return !target.startsWith('protocol/') && !BELOW_PROTOCOL.test(target);
}

describe('layering', () => {
  it('reads the imports of the protocol layer, type-only ones included', () => {
    // The scan itself: if it found nothing it would prove nothing.
    const imports = sourceFiles(join(src, 'protocol')).flatMap(relativeImports);
    expect(imports).toContain('logger.ts');
    expect(imports).toContain('model/types.ts');
    expect(imports).toContain('protocol/operations.ts');
  });

  it('no protocol file imports the runtime, the store contract or push delivery', () => {
    const climbing = sourceFiles(join(src, 'protocol')).flatMap((file) =>
      relativeImports(file)
        .filter(climbsFromProtocol)
        .map((target) => `${relative(src, file)} -> ${target}`),
    );
    expect(climbing).toEqual([]);
  });

  it('flags a protocol file that imports the runtime', () => {
    // The same check over a file that does what dispatch.ts once did.
    const file = join(src, 'protocol', 'dispatch.ts');
    const source = `import { A2AError } from '../errors.js';\nimport type { RuntimeLogger } from '../runtime.js';\n`;
    expect(importsIn(source, file).filter(climbsFromProtocol)).toEqual(['runtime.ts']);
  });

  it('the layers below the protocol import nothing above them', () => {
    // logger.ts and json.ts stand alone; telemetry.ts names protocol types only (the request it reports).
    for (const file of ['logger.ts', 'json.ts']) expect(relativeImports(join(src, file))).toEqual([]);
    expect(
      relativeImports(join(src, 'telemetry.ts')).filter((target) => !/^(model\/|protocol\/|errors\.ts)/.test(target)),
    ).toEqual([]);
  });

  it('the agent kit uses the executor contract and the model only, never the runtime or a store', () => {
    // What an adapter package builds on (`@fastify-a2a/core/agent-kit`): it must load without the runtime.
    const allowed = /^(agent-kit\/.*|executor\.ts|model\/.*|errors\.ts|json\.ts)$/;
    const imports = sourceFiles(join(src, 'agent-kit')).flatMap((file) =>
      relativeImports(file).map((target) => ({ file: relative(src, file), target })),
    );
    expect(imports.map(({ target }) => target)).toContain('executor.ts');
    expect(imports.filter(({ target }) => !allowed.test(target))).toEqual([]);
  });
});
