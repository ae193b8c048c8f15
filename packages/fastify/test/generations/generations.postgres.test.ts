import { PostgresStore } from '@fastify-a2a/store-postgres';
import { withPostgres } from '../../../../test-support/postgres.js';
import { generationSuite } from './suite.js';

const pg = withPostgres('a2a_generations');

generationSuite({
  name: 'Postgres',
  create: () => new PostgresStore({ connectionString: pg.url, schema: pg.schema }),
});
