import { PostgresStore } from '@fastify-a2a/store-postgres';
import { withPostgres } from '../../../test-support/postgres.js';
import { sdk0_3GrpcSuite } from './sdk-0.3-client.js';

const pg = withPostgres('a2a_grpc_sdk03');

sdk0_3GrpcSuite({ name: 'Postgres', create: () => new PostgresStore({ connectionString: pg.url, schema: pg.schema }) });
