/**
 * `steward/postgres`: sessions in PostgreSQL, shared by every process and server that points
 * at the same database. Its own entry so that `pg` is loaded only by apps that use it. Its
 * errors (LeaseLostError, StoreUnavailableError) come from `steward`, like every error.
 *
 * @example
 * import { createRuntime } from 'steward';
 * import { PostgresStore } from 'steward/postgres';
 * const runtime = createRuntime({ model, store: new PostgresStore(process.env.DATABASE_URL!) });
 */
export { PostgresStore, type PostgresStoreOptions } from './store/postgres-store.js';
