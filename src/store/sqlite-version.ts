/**
 * The SQLite file's schema version, apart from the schema's statements: `SqliteStore`
 * re-exports it, and its declaration must not import better-sqlite3's types (an app
 * compiled with `skipLibCheck: false` would then need @types/better-sqlite3).
 */

/** The schema this code reads and writes, kept in `PRAGMA user_version`. */
export const SCHEMA_VERSION = 8;
