// tsconfig.libcheck.json: every entry's declarations, checked with skipLibCheck false. An app
// has no @types/better-sqlite3 (better-sqlite3 ships no types), so no declaration may import it.
// steward/postgres is left out: its PostgresStore takes a pg.Pool, so its declarations name
// pg's types, which an app that uses it has from @types/pg (README says so).
import * as steward from 'steward';
import * as inspect from 'steward/inspect';
import * as machine from 'steward/machine';
import * as serve from 'steward/serve';
import * as store from 'steward/store';
import * as testing from 'steward/testing';

export const entries = [steward, inspect, machine, serve, store, testing].map((entry) => Object.keys(entry).length);
export const sqlite: steward.SqliteStore | undefined = undefined;
