/**
 * The SQLite file's schema (\`PRAGMA user_version\`), its migrations, the rows and the
 * statements that read and write them: what \`SqliteStore\` (sqlite-store.ts) runs, kept apart
 * so that the store's file holds only its behaviour (locking, durability, faults).
 */
import type Database from 'better-sqlite3';
import { SnapshotError, StoreError, UserError } from '../core/errors.js';
import { sqliteDriver } from './sqlite-driver.js';
import { SCHEMA_VERSION } from './sqlite-version.js';
import { toJson } from './store-json.js';
import { deadlineOfRow } from './stored-deadline.js';
import type { ArchiveItemInput, JournalEntry, JournalEntryInput, StoredSession } from './session-store.js';

/**
 * The oldest schema a read-only connection reads (it cannot migrate): v3 and v4 changed
 * nothing readers need; on a v2–v4 file a reader finds no package versions and no keys.
 */
const OLDEST_READABLE_VERSION = 2;

/**
 * migrations[n] takes a database from user_version n to n + 1: SQL, or a step that reads the
 * file first (to be rerunnable where SQLite's DDL has no IF NOT EXISTS). Append only; never
 * edit a shipped step.
 */
const migrations: Array<string | ((db: Database.Database) => void)> = [
  `CREATE TABLE IF NOT EXISTS sessions (
     id          TEXT PRIMARY KEY,
     package_id  TEXT,
     revision    INTEGER NOT NULL,
     snapshot    TEXT NOT NULL,
     state       TEXT NOT NULL,
     created_at  TEXT NOT NULL,
     updated_at  TEXT NOT NULL
   );
   CREATE TABLE IF NOT EXISTS journal (
     session_id  TEXT NOT NULL REFERENCES sessions(id),
     seq         INTEGER NOT NULL,
     at          TEXT NOT NULL,
     kind        TEXT NOT NULL,
     type        TEXT NOT NULL,
     payload     TEXT NOT NULL,
     state       TEXT NOT NULL,
     PRIMARY KEY (session_id, seq)
   );
   CREATE INDEX IF NOT EXISTS sessions_by_update ON sessions(updated_at DESC);`,
  // v2: the archive — every transcript message and tag version an event added, so the
  // snapshot can stay bounded. Written in the journal entry's transaction.
  `CREATE TABLE IF NOT EXISTS archive (
     session_id  TEXT NOT NULL REFERENCES sessions(id),
     kind        TEXT NOT NULL,
     key         TEXT NOT NULL,
     n           INTEGER NOT NULL,
     entry_seq   INTEGER NOT NULL,
     value       TEXT NOT NULL,
     PRIMARY KEY (session_id, kind, key, n)
   ) WITHOUT ROWID;`,
  // v3: fewer pages per write (each commit writes every page it touched to the WAL, and
  // that is most of its cost). The index on updated_at was rewritten by every write and
  // served only list(), which reads every session anyway; last_seq saves the MAX(seq)
  // lookup of every append.
  `DROP INDEX IF EXISTS sessions_by_update;
   ALTER TABLE sessions ADD COLUMN last_seq INTEGER NOT NULL DEFAULT 0;
   UPDATE sessions SET last_seq = COALESCE((SELECT MAX(seq) FROM journal WHERE journal.session_id = sessions.id), 0);`,
  // v4: list() pages by keyset on (updated_at, id): without this index every page sorted
  // every session, blocking the event loop for as long. It costs one index entry per write;
  // a read-only reader of a v3 file lists without it, just slower.
  `CREATE INDEX IF NOT EXISTS sessions_by_position ON sessions(updated_at, id);`,
  // v5: package versions, once per store by content hash (sessions are pinned to one in
  // their snapshot; a session of v4 or before is pinned to the package on disk when it is
  // first resumed), and the idempotency keys of sends, SEND_KEYS_KEPT per session.
  `CREATE TABLE IF NOT EXISTS package_versions (
     hash        TEXT PRIMARY KEY,
     package_id  TEXT NOT NULL,
     content     TEXT NOT NULL,
     created_at  TEXT NOT NULL
   ) WITHOUT ROWID;
   CREATE TABLE IF NOT EXISTS send_keys (
     session_id   TEXT NOT NULL REFERENCES sessions(id),
     key          TEXT NOT NULL,
     fingerprint  TEXT NOT NULL,
     seq          INTEGER NOT NULL,
     result       TEXT,
     PRIMARY KEY (session_id, key)
   ) WITHOUT ROWID;
   CREATE INDEX IF NOT EXISTS send_keys_by_seq ON send_keys(session_id, seq);`,
  // v6: the webhook outbox (sqlite-outbox.ts), written in the transaction of the entry that caused
  // each message; `next_at` is epoch ms (the deliverer's clock); a delivered message is deleted.
  // /healthz, a public route, reads the latest dead letters on each request: by an index.
  `CREATE TABLE IF NOT EXISTS webhook_outbox (
     id          TEXT PRIMARY KEY,
     receiver    TEXT NOT NULL,
     session_id  TEXT NOT NULL,
     entry_seq   INTEGER NOT NULL,
     type        TEXT NOT NULL,
     payload     TEXT NOT NULL,
     created_at  TEXT NOT NULL,
     status      TEXT NOT NULL DEFAULT 'pending',
     attempts    INTEGER NOT NULL DEFAULT 0,
     next_at     INTEGER NOT NULL DEFAULT 0,
     last_error  TEXT
   ) WITHOUT ROWID;
   CREATE INDEX IF NOT EXISTS webhook_outbox_due ON webhook_outbox(status, next_at);
   CREATE INDEX IF NOT EXISTS webhook_outbox_dead ON webhook_outbox(created_at, id) WHERE status = 'dead';`,
  // v7: who a session belongs to (src/store/participants.ts): its owner, a column (NULL: created by no
  // named caller), and its participants, a side table written once with the session, so that
  // list() filters in its query (the owner's sessions by the index, in list order; a name's or
  // group's by session_participants_by_who). The owner's index is partial: a file whose sessions
  // have no owner (the CLI, a shared token) pays nothing for it on its writes. Rerunnable.
  (db) => {
    const columns = db.prepare<[], { name: string }>(`SELECT name FROM pragma_table_info('sessions')`).all();
    if (!columns.some((c) => c.name === 'owner')) db.exec(`ALTER TABLE sessions ADD COLUMN owner TEXT`);
    db.exec(`CREATE TABLE IF NOT EXISTS session_participants (
       session_id  TEXT NOT NULL REFERENCES sessions(id),
       who         TEXT NOT NULL,
       ord         INTEGER NOT NULL,
       PRIMARY KEY (session_id, who)
     ) WITHOUT ROWID;
     CREATE INDEX IF NOT EXISTS session_participants_by_who ON session_participants(who, session_id);
     CREATE INDEX IF NOT EXISTS sessions_of_owner ON sessions(owner, updated_at, id) WHERE owner IS NOT NULL;`);
  },
  // v8: the open wait's deadline (stored-deadline.ts), three columns written in the transaction of
  // the entry that set it (all NULL: none); due_at is ISO text, so text order is time order. The
  // index is partial: a scan for due ones reads only the sessions that have a deadline, and a
  // write to a session without one pays nothing for it. Rerunnable.
  (db) => {
    const columns = db.prepare<[], { name: string }>(`SELECT name FROM pragma_table_info('sessions')`).all();
    for (const [name, type] of [
      ['due_at', 'TEXT'],
      ['due_wait', 'INTEGER'],
      ['due_level', 'INTEGER'],
    ] as const) {
      if (!columns.some((c) => c.name === name)) db.exec(`ALTER TABLE sessions ADD COLUMN ${name} ${type}`);
    }
    db.exec(`CREATE INDEX IF NOT EXISTS sessions_due ON sessions(due_at, id) WHERE due_at IS NOT NULL;`);
  },
];

export interface SessionRow {
  id: string;
  package_id: string | null;
  revision: number;
  snapshot: string;
  state: string;
  created_at: string;
  updated_at: string;
  /** The seq of the session's last journal entry (v3). */
  last_seq?: number;
  /** The creating caller's name (v7; absent on an older file read as it is). */
  owner?: string | null;
  /** The participants as a JSON array, in their order (read with the row: the `participants` subquery of the reads). */
  participants?: string | null;
  /** The deadline (v8; absent on an older file read as it is): ISO due time, wait and level, all NULL when none. */
  due_at?: string | null;
  due_wait?: number | null;
  due_level?: number | null;
}

export interface ArchiveRow {
  session_id: string;
  kind: ArchiveItemInput['kind'];
  key: string;
  n: number;
  entry_seq: number;
  value: string;
}

export interface JournalRow {
  session_id: string;
  seq: number;
  at: string;
  kind: JournalEntry['kind'];
  type: string;
  payload: string;
  state: string;
}

/** A read-only connection migrates nothing: the file must already hold this schema. */
export function checkReadable(db: Database.Database, path: string): void {
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version > SCHEMA_VERSION) throw newerSchema(path, version);
  if (version < OLDEST_READABLE_VERSION) {
    throw new StoreError('store_unavailable', `"${path}" holds no Steward sessions yet (schema version ${version}): opening it for writing sets it up.`, path);
  }
}

export function migrate(db: Database.Database, path: string): void {
  const version = () => db.pragma('user_version', { simple: true }) as number;
  if (version() > SCHEMA_VERSION) throw newerSchema(path, version());
  if (version() === SCHEMA_VERSION) return;
  // IMMEDIATE + re-check: two processes opening a fresh file at once migrate it only once.
  db.transaction(() => {
    const from = version();
    if (from > SCHEMA_VERSION) throw newerSchema(path, from);
    for (let v = from; v < SCHEMA_VERSION; v++) {
      const step = migrations[v]!;
      if (typeof step === 'string') db.exec(step);
      else step(db);
    }
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  }).immediate();
}

export function newerSchema(path: string, found: number): UserError {
  return new UserError(
    `The database "${path}" has schema version ${found}, but this Steward supports up to ${SCHEMA_VERSION}. ` +
      `Upgrade Steward, or point STEWARD_DB at another file.`,
  );
}

export function toJournalRow(sessionId: string, seq: number, at: string, entry: JournalEntryInput): JournalRow {
  return {
    session_id: sessionId,
    seq,
    at,
    kind: entry.kind,
    type: entry.type,
    payload: toJson(entry.payload, `the payload of "${entry.type}" in session "${sessionId}"`),
    state: entry.state,
  };
}

export function toArchiveRow(sessionId: string, entrySeq: number, item: ArchiveItemInput): ArchiveRow {
  return {
    session_id: sessionId,
    kind: item.kind,
    key: item.key,
    n: item.n,
    entry_seq: entrySeq,
    value: toJson(item.value, `the archived ${item.kind} ${item.key} #${item.n} of session "${sessionId}"`),
  };
}

export function toStoredSession(row: SessionRow): StoredSession {
  return {
    id: row.id,
    packageId: row.package_id,
    revision: row.revision,
    snapshot: parseJson(row.snapshot, () => `The stored snapshot of session "${row.id}" is corrupt JSON`),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    owner: row.owner ?? null,
    participants: participantsOf(row),
    deadline: deadlineOfRow(row.id, row.due_at, row.due_wait, row.due_level),
  };
}

/** A row's participants, from the JSON array its read aggregated (none on a file before v7). */
export function participantsOf(row: SessionRow): string[] {
  if (!row.participants) return [];
  return parseJson(row.participants, () => `The participants of session "${row.id}" are corrupt`) as string[];
}

export function parseJson(text: string, describe: () => string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new SnapshotError(`${describe()}: ${(error as Error).message}. The row cannot be used; restore it from a backup or delete the session.`, {
      cause: error,
    });
  }
}

/** A journal row whose (session, seq) is taken: last_seq was behind the journal. */
export function isJournalKeyClash(error: unknown): boolean {
  return error instanceof sqliteDriver().SqliteError && error.code === 'SQLITE_CONSTRAINT_PRIMARYKEY' && /\bjournal\./.test(error.message);
}
