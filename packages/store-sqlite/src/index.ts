export { notOpen, openError, storeError } from './errors.js';
export {
  MIGRATIONS_TABLE,
  type MigrateResult,
  type Migration,
  migrate,
  migrations,
  SchemaTooNewError,
} from './migrations.js';
export {
  DEFAULT_BUSY_TIMEOUT_MS,
  DEFAULT_NAMESPACE,
  DEFAULT_POLL_INTERVAL_MS,
  SqliteStore,
  type SqliteStoreOptions,
} from './store.js';
