/**
 * One place that turns a store location (--db, STEWARD_DB) into a SessionStore:
 * postgres:// or postgresql:// → PostgresStore (loaded on demand, so `pg` stays out of
 * processes that never use it); anything else → an SQLite file path.
 */
import { existsSync } from 'node:fs';
import { MemoryStore } from './memory-store.js';
import { redactUrl } from '../core/models/redact.js';
import type { SessionStore } from './session-store.js';
import { durabilityFromEnv, type Durability } from './session-store.js';
import { defaultDbPath, SqliteStore } from './sqlite-store.js';

export { redactUrl };

export function isPostgresUrl(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location);
}

/**
 * Where the CLI's store is: `--db`, else STEWARD_DB, else .steward/steward.db. A file path
 * is resolved against `cwd`; a PostgreSQL URL is kept as given.
 */
export function resolveStoreLocation(db: string | undefined, env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): string {
  const configured = db || env.STEWARD_DB;
  if (configured && isPostgresUrl(configured)) return configured;
  return db ? defaultDbPath({ STEWARD_DB: db }, cwd) : defaultDbPath(env, cwd);
}

/** The location as it may be printed: a PostgreSQL URL loses its password. */
export function printableLocation(location: string): string {
  return isPostgresUrl(location) ? redactUrl(location) : location;
}

/**
 * Opens the store at `location` (`readOnly`: an SQLite file is only read, never created) and, for PostgreSQL, connects and migrates before
 * returning, so a wrong URL fails here with a StoreUnavailableError that names the fix.
 * `durability` (default STEWARD_DURABILITY, else 'acknowledged'): which commits are flushed
 * to disk before they resolve (see session-store.ts). A PostgreSQL pool's size is STEWARD_PG_POOL
 * (default DEFAULT_PG_POOL_SIZE); STEWARD_PG_PREPARED=off sends every query unnamed (see postgres-prepared.ts). These settings
 * are read from `env` (default `process.env`).
 */
export async function openStore(
  location: string,
  { readOnly = false, durability, env = process.env }: { readOnly?: boolean; durability?: Durability; env?: NodeJS.ProcessEnv } = {},
): Promise<SessionStore> {
  if (!isPostgresUrl(location)) {
    // A reading command neither creates the file nor needs write access: a missing file reads as empty.
    if (readOnly && !existsSync(location)) return new MemoryStore();
    // A reading command writes nothing: STEWARD_DURABILITY is not read (a bad value must not break `list`).
    return new SqliteStore(location, readOnly ? { readOnly } : { durability: durability ?? durabilityFromEnv(env) });
  }
  const { PostgresStore, poolSizeFromEnv } = await import('./postgres-store.js');
  const { preparedFromEnv } = await import('./postgres-prepared.js');
  const store = new PostgresStore(location, {
    durability: durability ?? durabilityFromEnv(env),
    poolSize: poolSizeFromEnv(env),
    preparedStatements: preparedFromEnv(env),
  });
  try {
    await store.ready();
  } catch (error) {
    await store.close().catch(() => {});
    throw error;
  }
  return store;
}
