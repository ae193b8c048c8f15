import { PostgresStore } from '@fastify-a2a/store-postgres';
import { withPostgres } from '../../../../test-support/postgres.js';
import { protocolSuite } from '../../../fastify/test/protocol/suite.js';
import { grpcListenerBinding } from './grpc-client.js';

const pg = withPostgres('a2a_grpc_protocol');

protocolSuite({
  binding: grpcListenerBinding(),
  store: { name: 'Postgres', create: () => new PostgresStore({ connectionString: pg.url, schema: pg.schema }) },
  version: '1.0',
});
