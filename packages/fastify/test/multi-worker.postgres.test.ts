import { PostgresStore } from '@fastify-a2a/store-postgres';
import { withPostgres } from '../../../test-support/postgres.js';
import { multiWorkerScenarios } from './multi-worker/scenarios.js';

const pg = withPostgres('a2a_multiworker');

multiWorkerScenarios({
  name: 'Postgres',
  workers: 3,
  storeUrl: () => `${pg.url}${pg.url.includes('?') ? '&' : '?'}schema=${pg.schema}`,
  openStore: async () => new PostgresStore({ connectionString: pg.url, schema: pg.schema }),
});
