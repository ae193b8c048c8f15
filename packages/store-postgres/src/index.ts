export {
  appliedVersions,
  LATEST_VERSION,
  type MigrateResult,
  type Migration,
  type MigrationSqlOptions,
  migrate,
  migrationSql,
  migrations,
} from './migrations.js';
export { PostgresStore, type PostgresStoreOptions } from './store.js';
