import { concurrency, storeConformance } from '@fastify-a2a/core/testing';
import { describe, it } from 'vitest';
import { withPostgres } from '../../../test-support/postgres.js';
import { PostgresStore } from '../src/index.js';

// Each conformance `location` becomes a schema of its own (dropped after the file); the suite
// reuses a location to reopen a store or to put two namespaces side by side.
const pg = withPostgres('pgstore_conformance');

storeConformance({
  test: it,
  describe,
  locationPrefix: 'pgstore_conformance',
  factory: ({ clock, location, namespace }) =>
    new PostgresStore({ connectionString: pg.url, schema: pg.track(location), namespace, clock }),
});

// The commit tests again with every commit its own statement on the pool (group commit off).
describe('groupCommit: false', () => {
  concurrency({
    test: it,
    describe,
    locationPrefix: 'pgstore_conformance',
    factory: ({ clock, location, namespace }) =>
      new PostgresStore({ connectionString: pg.url, schema: pg.track(location), namespace, clock, groupCommit: false }),
  });
});
