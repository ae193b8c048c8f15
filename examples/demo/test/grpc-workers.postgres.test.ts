import { withPostgres } from '../../../test-support/postgres.js';
import { multiWorkerGrpcSuite } from './grpc-workers.js';

const pg = withPostgres('a2a_grpc_workers');

multiWorkerGrpcSuite('Postgres', () => {
  // A schema per scenario: the demo creates it (migrations) on start.
  const url = new URL(pg.url);
  url.searchParams.set('schema', pg.newSchema());
  return url.href;
});
