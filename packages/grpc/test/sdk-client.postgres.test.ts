import { PostgresStore } from '@fastify-a2a/store-postgres';
import { withPostgres } from '../../../test-support/postgres.js';
import { sdkGrpcSuite } from './sdk-client.js';

const pg = withPostgres('a2a_grpc_sdk');

sdkGrpcSuite({ name: 'Postgres', create: () => new PostgresStore({ connectionString: pg.url, schema: pg.schema }) });
