#!/usr/bin/env node
// The `a2a` command: plain JavaScript that runs the compiled CLI (no tsx, no export conditions).
import('../dist/cli/main.js').then(
  ({ run }) => run(),
  (error) => {
    if (error?.code === 'ERR_MODULE_NOT_FOUND') {
      process.stderr.write(
        'a2a: the CLI is not built. Run `npm run build -w packages/core -w packages/client` in the workspace (npm ci does it through `prepare`).\n',
      );
    } else process.stderr.write(`a2a: ${error?.message ?? error}\n`);
    process.exitCode = 1;
  },
);
