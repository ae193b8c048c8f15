import { withPostgres } from '../../../test-support/postgres.js';
import { generationClusterScenarios } from './generations/multi-worker.js';

const pg = withPostgres('a2a_generations_workers');

generationClusterScenarios({
  name: 'Postgres',
  storeUrl: () => `${pg.url}${pg.url.includes('?') ? '&' : '?'}schema=${pg.schema}`,
});
