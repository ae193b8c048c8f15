/**
 * Compiles the demo server to plain JavaScript (examples/demo/dist/server.mjs), so that `npm start`
 * serves what production runs: Node without tsx (whose loader a deployment does not ship, and
 * whose keep-names wrappers cost heap per closure). The repository's own packages are bundled from
 * their TypeScript sources; every npm dependency stays an import, loaded from node_modules.
 * It takes about a second, so `npm start` builds every time and never serves a stale bundle. The
 * demo's tests spawn the same build (`buildDemo(outfile)`), each test process into a file of its own.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const demoDir = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Only fastify-a2a and @fastify-a2a/* are compiled in; other bare imports load from node_modules. */
const externalDependencies = {
  name: 'external-dependencies',
  setup(builder) {
    builder.onResolve({ filter: /^[^./]/ }, (args) => {
      const own = args.path === 'fastify-a2a' || args.path.startsWith('@fastify-a2a/');
      return own ? undefined : { path: args.path, external: true };
    });
  },
};

/** Builds the demo server into `outfile` (inside the repository, so its imports find node_modules). */
export async function buildDemo(outfile = join(demoDir, 'dist', 'server.mjs')) {
  await build({
    entryPoints: [join(demoDir, 'src', 'server.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: true,
    conditions: ['@fastify-a2a/source'],
    plugins: [externalDependencies],
    logLevel: 'warning',
  });
  return outfile;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildDemo();
