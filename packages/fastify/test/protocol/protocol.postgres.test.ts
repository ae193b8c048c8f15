import { PostgresStore } from '@fastify-a2a/store-postgres';
import { withPostgres } from '../../../../test-support/postgres.js';
import { protocolSuite, type StoreFixture } from './suite.js';

// A fresh schema for this test file (dropped after it); each scenario opens its own store (pool and
// LISTEN connection) on it and closes it, as a worker would.
const pg = withPostgres('a2a_protocol');

const store: StoreFixture = {
  name: 'Postgres',
  create: () => new PostgresStore({ connectionString: pg.url, schema: pg.schema }),
};

for (const version of ['0.3', '1.0'] as const) {
  protocolSuite({ binding: 'JSONRPC', store, version });
  protocolSuite({ binding: 'HTTP+JSON', store, version });
}
