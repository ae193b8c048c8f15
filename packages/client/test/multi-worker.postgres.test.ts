import { withPostgres } from '../../../test-support/postgres.js';
import { clientMultiWorker } from './multi-worker.js';

const pg = withPostgres('client_workers');

clientMultiWorker({
  name: 'Postgres',
  storeUrl: () => {
    const url = new URL(pg.url);
    url.searchParams.set('schema', pg.newSchema());
    return url.href;
  },
});
