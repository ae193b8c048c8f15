/** Builds the demo server into `outfile` (default examples/demo/dist/server.mjs) and returns its path. */
export function buildDemo(outfile?: string): Promise<string>;
