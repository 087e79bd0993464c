import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type Database from 'better-sqlite3';
import { ConflictError, SessionNotFoundError, StoreError } from '../core/errors.js';
import { revisionConflict } from './memory-store.js';
import { toJson } from './store-json.js';
import {
  checkReadable,
  isJournalKeyClash,
  migrate,
  parseJson,
  toArchiveRow,
  toJournalRow,
  participantsOf,
  toStoredSession,
  type ArchiveRow,
  type JournalRow,
  type SessionRow,
} from './sqlite-schema.js';
import { sqliteDriver } from './sqlite-driver.js';
import { storeFault } from './sqlite-faults.js';
import { LockWaits } from './sqlite-busy.js';
import { WalFlush } from './wal-flush.js';
import { durabilityOption, flushesCommit, SEND_KEYS_KEPT, type Durability } from './session-store.js';
import type {
  AppendInput,
  CreateInput,
  SendKeyInput,
  SendKeyRecord,
  StoredPackageVersion,
  ArchiveItem,
  ArchiveItemInput,
  JournalEntry,
  JournalEntryInput,
  ListOptions,
  SessionPage,
  SessionStore,
  StoredSession,
} from './session-store.js';
import { listRequest, pageOf } from './list-page.js';
import { insertOutboxSql, SqliteOutbox, toOutboxRows, type OutboxRow } from './sqlite-outbox.js';
import { deadlineInput, deadlineOfRow, dueRequest, type DueDeadline, type StoredDeadline } from './stored-deadline.js';
import type { OutboxOps } from './outbox.js';
import { checkSessionId } from '../ids.js';

/** How long a command waits for another process's lock: reading commands should not hang. */
export const WRITE_BUSY_TIMEOUT_MS = 5000;
export const READ_BUSY_TIMEOUT_MS = 2000;

export { durabilityFromEnv, type Durability } from './session-store.js';
export { SCHEMA_VERSION } from './sqlite-version.js';

/** Where the CLI keeps its sessions unless told otherwise. An empty STEWARD_DB counts as unset. */
export function defaultDbPath(env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): string {
  const configured = env.STEWARD_DB;
  return configured ? resolve(cwd, configured) : join(cwd, '.steward', 'steward.db');
}

const FULL = 2;
const NORMAL = 1;

/**
 * The default SessionStore: one SQLite file, shared safely by several processes.
 * WAL lets readers run beside the single writer; a second writer waits for the lock (up to
 * `busyTimeoutMs`) instead of failing with SQLITE_BUSY; `revision` catches the writer that
 * read a session before someone else saved it.
 *
 * better-sqlite3 is synchronous, so the wait is not SQLite's busy handler (it would sleep
 * inside the call and stop this event loop): an operation that meets a lock is retried
 * after an awaited timer (sqlite-busy.ts), and `busy` says one is waiting. Only opening the
 * store (a migration, switching to WAL) waits synchronously, before it serves anything.
 *
 * @example
 * const store = new SqliteStore('.steward/steward.db', { durability: 'acknowledged' });
 * const runtime = createRuntime({ model, store });
 * // … when done:
 * await store.close();
 */
export class SqliteStore implements SessionStore {
  readonly kind = 'sqlite';
  readonly path: string;
  private readonly db!: Database.Database;
  private readonly stmts: ReturnType<typeof prepareReads>;
  /** The writing statements and transactions, made on the first write (a read-only connection may read a v2 file). */
  private writer: Writer | undefined;

  /** Opened with `readOnly`: reads work on a read-only file or folder; nothing is created or migrated. */
  readonly readOnly: boolean;
  readonly durability: Durability;
  private readonly busyTimeoutMs: number;
  private readonly lockWaits: LockWaits;
  /** The connection's `synchronous` level (2 FULL, 1 NORMAL), set before each commit that needs another. */
  private syncLevel = 0;
  /** The reads of schema v5 (package versions, send keys); null on an older file opened read-only. */
  private readonly v5Reads: ReturnType<typeof prepareV5Reads> | null;
  /** Durable writes share one fsync of the WAL file, off the event loop (a file in WAL mode; see wal-flush.ts). */
  private readonly walFlush: WalFlush | null = null;
  /** The webhook outbox (schema v6), written with the entries that cause its messages. */
  private readonly sqliteOutbox = new SqliteOutbox(
    () => this.db,
    (work) => this.guard(work),
  );
  /** Typed as the store contract's operations: the declaration files an app reads then name no type of better-sqlite3. */
  readonly outbox: OutboxOps = this.sqliteOutbox;

  constructor(path: string, options: { busyTimeoutMs?: number; readOnly?: boolean; durability?: Durability } = {}) {
    this.path = path;
    this.readOnly = options.readOnly === true;
    this.durability = durabilityOption(options.durability, 'SqliteStore');
    this.busyTimeoutMs = options.busyTimeoutMs ?? (this.readOnly ? READ_BUSY_TIMEOUT_MS : WRITE_BUSY_TIMEOUT_MS);
    // The driver first: without it nothing may be created (no empty .steward/ left behind).
    const Driver = sqliteDriver();
    /** The first folder this constructor created for the file, removed again if the store does not open. */
    let madeDir: string | undefined;
    if (path !== ':memory:') {
      if (statSync(path, { throwIfNoEntry: false })?.isDirectory()) {
        throw new StoreError('store_unavailable', `"${path}" is a folder, not a database file. Use a file path, e.g. ${join(path, 'steward.db')}.`, path);
      }
      if (!this.readOnly) {
        try {
          madeDir = mkdirSync(dirname(resolve(path)), { recursive: true });
        } catch (error) {
          throw storeFault(error, path, this.busyTimeoutMs);
        }
      }
    }
    let db: Database.Database | undefined;
    try {
      db = this.readOnly ? this.openForReading(path) : new Driver(path, { timeout: this.busyTimeoutMs });
      // Before anything else touches the file: its header says if it is SQLite at all.
      if (this.readOnly) checkReadable(db, path);
      else {
        migrate(db, path);
        const mode = db.pragma('journal_mode = WAL', { simple: true });
        if (mode === 'wal' && path !== ':memory:') this.walFlush = new WalFlush(`${resolve(path)}-wal`);
      }
      db.pragma('foreign_keys = ON');
      this.stmts = prepareReads(db, hasParticipants(db), hasDeadlines(db));
      this.v5Reads = (db.pragma('user_version', { simple: true }) as number) >= 5 ? prepareV5Reads(db) : null;
      // Set up: from now on a lock fails at once and is waited for without blocking (see `guard`).
      db.pragma('busy_timeout = 0');
    } catch (error) {
      db?.close();
      if (this.copyDir) rmSync(this.copyDir, { recursive: true, force: true });
      if (madeDir) rmSync(madeDir, { recursive: true, force: true });
      throw storeFault(error, path, this.busyTimeoutMs);
    }
    this.db = db;
    this.lockWaits = new LockWaits(this.busyTimeoutMs);
  }

  /** True while an operation of this store waits for a lock another process holds: reads still answer meanwhile. */
  get busy(): boolean {
    return this.lockWaits.busy;
  }

  private get write(): Writer {
    return (this.writer ??= makeWriter(this.db));
  }

  async create(session: CreateInput): Promise<StoredSession> {
    checkSessionId(session.id, 'SqliteStore.create');
    const deadline = deadlineInput(session.deadline, session.id) ?? null;
    const at = new Date().toISOString();
    const row: SessionRow = {
      id: session.id,
      package_id: session.packageId,
      revision: 1,
      snapshot: toJson(session.snapshot, `the snapshot of session "${session.id}"`),
      state: session.entry.state,
      created_at: at,
      updated_at: at,
      last_seq: 1,
      owner: session.owner ?? null,
      ...dueColumns(deadline),
    };
    const participants = [...new Set(session.participants ?? [])];
    const entry = toJournalRow(session.id, 1, at, session.entry);
    const archive = (session.entry.added ?? []).map((item) => toArchiveRow(session.id, 1, item));
    const versions = versionRows(session.packageVersions, at);
    const outbox = toOutboxRows(session.id, 1, at, session.entry.outbox);
    try {
      await this.lockWaits.run(() => {
        // In each attempt: another write of this process may have set another level meanwhile.
        this.commitAt(this.levelFor(flushesCommit(this.durability)));
        this.write.createTx(row, entry, archive, versions, outbox, participants);
      });
      if (outbox.length) this.sqliteOutbox.wake();
      if (this.walFlush && flushesCommit(this.durability)) await this.flushed();
    } catch (error) {
      if (error instanceof sqliteDriver().SqliteError && error.code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
        throw new ConflictError(`Session "${session.id}" already exists; pick another id or load the existing session.`);
      }
      throw this.fault(error);
    }
    return { ...toStoredSession(row), participants };
  }

  async load(id: string): Promise<StoredSession | undefined> {
    const row = await this.guard(() => this.stmts.session.get(id));
    return row ? toStoredSession(row) : undefined;
  }

  async append(input: AppendInput): Promise<number> {
    const { id, expectedRevision, entries, snapshot, archive = [] } = input;
    // Serialise outside the transaction (once, also for the retry): a bad value fails before any lock is taken.
    const json = toJson(snapshot, `the snapshot of session "${id}"`);
    const deadline = deadlineInput(input.deadline, id);
    const at = new Date().toISOString();
    const rows = appendRows(id, at, entries, archive);
    rows.versions = versionRows(input.packageVersions, at);
    rows.deadline = deadline === undefined ? null : { due_set: 1, ...dueColumns(deadline) };
    const state = entries.at(-1)?.state ?? null;
    // Each attempt (again after waiting for a lock) is whole: the level, the transaction, the repair.
    const durable = flushesCommit(this.durability, input);
    const revision = await this.guard(() => {
      this.commitAt(this.levelFor(durable));
      try {
        return this.write.appendTx(id, expectedRevision, rows, json, at, state);
      } catch (error) {
        if (!isJournalKeyClash(error)) throw error;
        // A Steward of schema v2 that had the file open before it was migrated writes entries
        // without keeping last_seq: derive it from the journal once and write again (the
        // failed transaction rolled back whole).
        this.write.repairLastSeq.run(id);
        return this.write.appendTx(id, expectedRevision, rows, json, at, state);
      }
    });
    if (rows.outbox.length) this.sqliteOutbox.wake();
    if (this.walFlush && durable) await this.flushed();
    return revision;
  }

  /** Fsyncs completed for durable writes (each covers every write committed before it began). */
  get walFlushes(): number {
    return this.walFlush?.flushes ?? 0;
  }

  /** A commit that must be durable: FULL, unless the WAL flush makes it durable after the commit. */
  private levelFor(durable: boolean): typeof FULL | typeof NORMAL {
    return durable && !this.walFlush ? FULL : NORMAL;
  }

  private async flushed(): Promise<void> {
    try {
      await this.walFlush!.flush();
    } catch (error) {
      // Committed, but not known to be on disk: say so; the journal holds the write.
      throw storeFault(error, this.path, this.busyTimeoutMs);
    }
  }

  /**
   * The connection's `PRAGMA synchronous` now (2 FULL, 1 NORMAL): the level the last commit
   * used. SQLite refuses to change it inside a transaction, so it is set before BEGIN.
   */
  synchronous(): number {
    try {
      return this.db.pragma('synchronous', { simple: true }) as number;
    } catch (error) {
      throw this.fault(error);
    }
  }

  /**
   * Sets the level of the next commit. Set explicitly, never left to SQLite: a connection
   * that opens a file already in WAL mode starts at NORMAL in better-sqlite3's build
   * (SQLITE_DEFAULT_WAL_SYNCHRONOUS=1), one that switched it to WAL at FULL.
   */
  private commitAt(level: typeof FULL | typeof NORMAL): void {
    if (this.syncLevel === level) return;
    // Not a prepared statement: SQLite applies this pragma when it compiles it, not when it runs.
    this.db.exec(level === FULL ? 'PRAGMA synchronous = FULL' : 'PRAGMA synchronous = NORMAL');
    this.syncLevel = level;
  }

  async archived(id: string, kind: ArchiveItemInput['kind'], key: string, options: { from?: number; to?: number } = {}): Promise<ArchiveItem[]> {
    const rows = await this.guard(() => this.stmts.archived.all(id, kind, key, options.from ?? Number.MIN_SAFE_INTEGER, options.to ?? Number.MAX_SAFE_INTEGER));
    return rows.map((row) => ({
      kind: row.kind,
      key: row.key,
      n: row.n,
      entrySeq: row.entry_seq,
      value: parseJson(row.value, () => `Archived ${row.kind} ${row.key} #${row.n} of session "${row.session_id}" holds corrupt JSON`),
    }));
  }

  async packageVersion(hash: string): Promise<StoredPackageVersion | undefined> {
    const reads = this.v5Reads;
    if (!reads) return undefined;
    const row = await this.guard(() => reads.packageVersion.get(hash));
    return row ? { hash: row.hash, packageId: row.package_id, json: row.content } : undefined;
  }

  async sendKey(id: string, key: string): Promise<SendKeyRecord | undefined> {
    const reads = this.v5Reads;
    if (!reads) return undefined;
    const row = await this.guard(() => reads.sendKey.get(id, key));
    if (!row) return undefined;
    const result = row.result === null ? null : parseJson(row.result, () => `The stored result of key "${key}" of session "${id}" is corrupt JSON`);
    return { key: row.key, fingerprint: row.fingerprint, seq: row.seq, result };
  }

  async saveSendResult(id: string, key: string, result: unknown): Promise<void> {
    const json = toJson(result, `the result of the send with key "${key}" of session "${id}"`);
    const durable = flushesCommit(this.durability);
    await this.guard(() => {
      this.commitAt(this.levelFor(durable));
      this.write.saveResult.run(json, id, key);
    });
    if (this.walFlush && durable) await this.flushed();
  }

  async journal(id: string, options: { afterSeq?: number; limit?: number } = {}): Promise<JournalEntry[]> {
    // LIMIT -1 means "no limit" in SQLite; a negative caller limit means "none", as in MemoryStore.
    const limit = options.limit === undefined ? -1 : Math.max(0, Math.floor(options.limit));
    const rows = await this.guard(() => this.stmts.journal.all(id, options.afterSeq ?? 0, limit));
    return rows.map((row) => ({
      sessionId: row.session_id,
      seq: row.seq,
      at: row.at,
      kind: row.kind,
      type: row.type,
      payload: parseJson(row.payload, () => `Journal entry ${row.seq} of session "${row.session_id}" holds corrupt JSON`),
      state: row.state,
    }));
  }

  async list(options?: ListOptions): Promise<SessionPage> {
    const { limit, after } = listRequest(options);
    const access = options?.visibleTo;
    const visible = this.stmts.listVisible;
    // A file from before owners (read-only, not migrated): no session has one, so a caller's filter shows none.
    if (access && !visible) return { sessions: [], next: null };
    const rows = await this.guard(() =>
      access
        ? visible!.all({
            owner: access.owner,
            whos: JSON.stringify(access.participants),
            // The first page starts after a position every row sorts before ('~' is above every ISO date).
            at: after?.updatedAt ?? '~',
            id: after?.id ?? '',
            n: limit + 1,
          })
        : after
          ? this.stmts.listAfter.all(after.updatedAt, after.id, limit + 1)
          : this.stmts.listFirst.all(limit + 1),
    );
    return pageOf(
      rows,
      limit,
      (row) => ({ updatedAt: row.updated_at, id: row.id }),
      (row) => ({
        id: row.id,
        packageId: row.package_id,
        revision: row.revision,
        state: row.state,
        createdAt: row.created_at,
        updatedAt: row.updated_at,
        owner: row.owner ?? null,
        participants: participantsOf(row),
      }),
    );
  }

  async dueDeadlines(now: string, limit: number): Promise<DueDeadline[]> {
    const request = dueRequest(now, limit);
    const due = this.stmts.due;
    // A file from before deadlines (read-only, not migrated): none is due.
    if (!due) return [];
    const rows = await this.guard(() => due.all(request.now, request.limit));
    return rows.map((row) => ({ sessionId: row.id, deadline: deadlineOfRow(row.id, row.due_at, row.due_wait, row.due_level)! }));
  }

  async close(): Promise<void> {
    await this.walFlush?.close();
    if (this.db?.open) this.db.close();
    if (this.copyDir) rmSync(this.copyDir, { recursive: true, force: true });
  }

  /** A copy made to read a store in a read-only folder; removed on close. */
  private copyDir: string | undefined;

  /**
   * A read-only connection. SQLite cannot read a WAL database in a folder it may not write
   * (it needs the -shm file beside it): then the file (and its -wal) are copied to a
   * private temp folder and read there, a snapshot of the store as it is now.
   */
  private openForReading(path: string): Database.Database {
    const db = new (sqliteDriver())(path, { timeout: this.busyTimeoutMs, readonly: true, fileMustExist: true });
    try {
      db.pragma('user_version'); // the first read is where a missing -shm shows
      return db;
    } catch (error) {
      db.close();
      if (!(error instanceof sqliteDriver().SqliteError && error.code === 'SQLITE_READONLY_DIRECTORY')) throw error;
      this.copyDir = mkdtempSync(join(tmpdir(), 'steward-read-'));
      const copy = join(this.copyDir, 'steward.db');
      copyFileSync(path, copy);
      if (existsSync(`${path}-wal`)) copyFileSync(`${path}-wal`, `${copy}-wal`);
      return new (sqliteDriver())(copy, { timeout: this.busyTimeoutMs, readonly: true, fileMustExist: true });
    }
  }

  private fault(error: unknown): unknown {
    return storeFault(error, this.path, this.busyTimeoutMs);
  }

  /**
   * Runs a statement (or a whole transaction), waiting for another process's lock without
   * blocking; SQLite's failures become StoreErrors naming this file.
   */
  private async guard<T>(run: () => T): Promise<T> {
    try {
      return await this.lockWaits.run(run);
    } catch (error) {
      throw this.fault(error);
    }
  }
}

/** Whether the file has the session_participants table (schema v7: owners and participants). */
function hasParticipants(db: Database.Database): boolean {
  return db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'session_participants'`).get() !== undefined;
}

/** Whether the file has the deadline columns (schema v8). */
function hasDeadlines(db: Database.Database): boolean {
  return db.prepare(`SELECT 1 FROM pragma_table_info('sessions') WHERE name = 'due_at'`).get() !== undefined;
}

/** A deadline as the row's three columns (all NULL: none). */
function dueColumns(deadline: StoredDeadline | null): DueColumns {
  return { due_at: deadline?.dueAt ?? null, due_wait: deadline?.wait ?? null, due_level: deadline?.level ?? null };
}

interface DueColumns {
  due_at: string | null;
  due_wait: number | null;
  due_level: number | null;
}

/** A session's participants as a JSON array, in their order (read by the table's primary key). */
const PARTICIPANTS = `(SELECT json_group_array(p.who ORDER BY p.ord) FROM session_participants p WHERE p.session_id = sessions.id) AS participants`;

/**
 * The reading statements, compiled once per connection; they read schema v2 to v5 alike, and
 * owners and participants where the file has them (`access`: v7), deadlines too (`deadlines`: v8).
 */
function prepareReads(db: Database.Database, access: boolean, deadlines: boolean) {
  const summary = `id, package_id, revision, state, created_at, updated_at${access ? `, owner, ${PARTICIPANTS}` : ''}`;
  return {
    archived: db.prepare<[string, string, string, number, number], ArchiveRow>(
      `SELECT * FROM archive WHERE session_id = ? AND kind = ? AND key = ? AND n BETWEEN ? AND ? ORDER BY n`,
    ),
    session: db.prepare<[string], SessionRow>(`SELECT *${access ? `, ${PARTICIPANTS}` : ''} FROM sessions WHERE id = ?`),
    journal: db.prepare<[string, number, number], JournalRow>(`SELECT * FROM journal WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?`),
    // Keyset paging on (updated_at, id), newest first: the sessions_by_position index (v4) is read backwards from the cursor.
    listFirst: db.prepare<[number], SessionRow>(
      `SELECT ${summary} FROM sessions
       ORDER BY updated_at DESC, id DESC LIMIT ?`,
    ),
    listAfter: db.prepare<[string, string, number], SessionRow>(
      `SELECT ${summary} FROM sessions
       WHERE (updated_at, id) < (?, ?)
       ORDER BY updated_at DESC, id DESC LIMIT ?`,
    ),
    // A caller's page (ListOptions.visibleTo), the same keyset walk: the owner's next rows by
    // sessions_of_owner, read backwards from the cursor, and the next rows shared with one of
    // `whos` (by session_participants_by_who), each at most a page; the page is cut from both.
    listVisible: access
      ? db.prepare<[{ owner: string; whos: string; at: string; id: string; n: number }], SessionRow>(
          `WITH visible(id) AS (
             SELECT id FROM (
               SELECT id FROM sessions WHERE owner = @owner AND (updated_at, id) < (@at, @id)
               ORDER BY updated_at DESC, id DESC LIMIT @n)
             UNION
             SELECT id FROM (
               -- Grouped: a session shared with two of \`whos\` is one row of the page.
               SELECT s.id FROM session_participants p JOIN sessions s ON s.id = p.session_id
               WHERE p.who IN (SELECT value FROM json_each(@whos)) AND (s.updated_at, s.id) < (@at, @id)
               GROUP BY s.id, s.updated_at
               ORDER BY s.updated_at DESC, s.id DESC LIMIT @n)
           )
           SELECT ${summary} FROM sessions WHERE id IN (SELECT id FROM visible)
           ORDER BY updated_at DESC, id DESC LIMIT @n`,
        )
      : null,
    // The longest due first, by the partial index sessions_due (v8): only sessions with a deadline are read.
    due: deadlines
      ? db.prepare<[string, number], Required<Pick<SessionRow, 'id' | 'due_at' | 'due_wait' | 'due_level'>>>(
          `SELECT id, due_at, due_wait, due_level FROM sessions
           WHERE due_at IS NOT NULL AND due_at <= ?
           ORDER BY due_at, id LIMIT ?`,
        )
      : null,
  };
}

/** The reads of schema v5, compiled only where its tables exist. */
function prepareV5Reads(db: Database.Database) {
  return {
    packageVersion: db.prepare<[string], { hash: string; package_id: string; content: string }>(`SELECT * FROM package_versions WHERE hash = ?`),
    sendKey: db.prepare<[string, string], { key: string; fingerprint: string; seq: number; result: string | null }>(
      `SELECT key, fingerprint, seq, result FROM send_keys WHERE session_id = ? AND key = ?`,
    ),
  };
}

interface VersionRow {
  hash: string;
  package_id: string;
  content: string;
  created_at: string;
}

function versionRows(versions: readonly StoredPackageVersion[] | undefined, at: string): VersionRow[] {
  return (versions ?? []).map((v) => ({ hash: v.hash, package_id: v.packageId, content: v.json, created_at: at }));
}

interface SendKeyRow extends SendKeyInput {
  session_id: string;
  seq: number;
}

type Writer = ReturnType<typeof makeWriter>;

/** The writing statements (schema v8: a read-only connection never makes them) and the two write transactions. */
function makeWriter(db: Database.Database) {
  const s = {
    insertSession: db.prepare<[SessionRow]>(
      `INSERT INTO sessions (id, package_id, revision, last_seq, snapshot, state, created_at, updated_at, owner, due_at, due_wait, due_level)
       VALUES (@id, @package_id, @revision, @last_seq, @snapshot, @state, @created_at, @updated_at, @owner, @due_at, @due_wait, @due_level)`,
    ),
    insertEntry: db.prepare<[JournalRow]>(
      `INSERT INTO journal (session_id, seq, at, kind, type, payload, state)
       VALUES (@session_id, @seq, @at, @kind, @type, @payload, @state)`,
    ),
    updateSession: db.prepare<[{ id: string; revision: number; last_seq: number; snapshot: string; state: string | null; updated_at: string } & DueUpdate]>(
      // An append without entries keeps the state it had; one without a deadline (due_set 0) the deadline.
      `UPDATE sessions SET revision = @revision, last_seq = @last_seq, snapshot = @snapshot,
         state = COALESCE(@state, state), updated_at = @updated_at,
         due_at = CASE WHEN @due_set THEN @due_at ELSE due_at END,
         due_wait = CASE WHEN @due_set THEN @due_wait ELSE due_wait END,
         due_level = CASE WHEN @due_set THEN @due_level ELSE due_level END
       WHERE id = @id`,
    ),
    insertArchive: db.prepare<[ArchiveRow]>(
      `INSERT INTO archive (session_id, kind, key, n, entry_seq, value)
       VALUES (@session_id, @kind, @key, @n, @entry_seq, @value)`,
    ),
    head: db.prepare<[string], { revision: number; last_seq: number }>(`SELECT revision, last_seq FROM sessions WHERE id = ?`),
    repairLastSeq: db.prepare<[string]>(
      `UPDATE sessions SET last_seq = COALESCE((SELECT MAX(seq) FROM journal WHERE journal.session_id = sessions.id), 0) WHERE id = ?`,
    ),
    // A version is kept once per store: the same hash is the same content.
    insertVersion: db.prepare<[VersionRow]>(
      `INSERT OR IGNORE INTO package_versions (hash, package_id, content, created_at) VALUES (@hash, @package_id, @content, @created_at)`,
    ),
    insertKey: db.prepare<[SendKeyRow]>(
      `INSERT INTO send_keys (session_id, key, fingerprint, seq, result) VALUES (@session_id, @key, @fingerprint, @seq, NULL)`,
    ),
    insertOutbox: db.prepare<[OutboxRow]>(insertOutboxSql),
    // Only the SEND_KEYS_KEPT latest keys of the session stay.
    pruneKeys: db.prepare<[string, string, number]>(
      `DELETE FROM send_keys WHERE session_id = ? AND seq <= (SELECT seq FROM send_keys WHERE session_id = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)`,
    ),
  };
  const insertParticipant = db.prepare<[string, string, number]>(`INSERT INTO session_participants (session_id, who, ord) VALUES (?, ?, ?)`);
  return {
    repairLastSeq: s.repairLastSeq,
    saveResult: db.prepare<[string, string, string]>(`UPDATE send_keys SET result = ? WHERE session_id = ? AND key = ?`),
    createTx: db.transaction(
      (row: SessionRow, entry: JournalRow, archive: ArchiveRow[], versions: VersionRow[], outbox: OutboxRow[], participants: readonly string[]) => {
        for (const version of versions) s.insertVersion.run(version);
        s.insertSession.run(row);
        s.insertEntry.run(entry);
        for (const item of archive) s.insertArchive.run(item);
        for (const message of outbox) s.insertOutbox.run(message);
        participants.forEach((who, ord) => insertParticipant.run(row.id, who, ord));
      },
    ).immediate,
    // Read, compare and write under one RESERVED lock (BEGIN IMMEDIATE): no other
    // process can slip a write between our revision check and our update.
    // The rows come serialised, their seq / entry_seq counted from 0 (the session's last seq
    // is read under the lock and added here), so no JSON is built while the lock is held.
    appendTx: db.transaction((id: string, expectedRevision: number, rows: AppendRows, snapshot: string, at: string, state: string | null): number => {
      const head = s.head.get(id);
      if (head === undefined) throw new SessionNotFoundError(id);
      const current = head.revision;
      if (current !== expectedRevision) throw revisionConflict(id, current, expectedRevision);
      const base = head.last_seq;
      for (const version of rows.versions) s.insertVersion.run(version);
      for (const row of rows.journal) s.insertEntry.run({ ...row, seq: base + row.seq });
      for (const row of rows.archive) s.insertArchive.run({ ...row, entry_seq: base + row.entry_seq });
      for (const key of rows.keys) s.insertKey.run({ ...key, seq: base + key.seq });
      if (rows.keys.length) s.pruneKeys.run(id, id, SEND_KEYS_KEPT);
      for (const message of rows.outbox) s.insertOutbox.run({ ...message, entry_seq: base + message.entry_seq });
      const next = current + 1;
      s.updateSession.run({ id, revision: next, last_seq: base + rows.journal.length, snapshot, state, updated_at: at, ...(rows.deadline ?? KEEP_DEADLINE) });
      return next;
    }).immediate,
  };
}

/** The deadline columns of an append: `due_set` 1 writes the three (NULL clears), 0 keeps what is stored. */
type DueUpdate = DueColumns & { due_set: 0 | 1 };
const KEEP_DEADLINE: DueUpdate = { due_set: 0, due_at: null, due_wait: null, due_level: null };

/** An append's rows, serialised: seq counted from 1 for the entries, entry_seq from 0 (the archive given beside them belongs to the entry before). */
interface AppendRows {
  journal: JournalRow[];
  archive: ArchiveRow[];
  /** Idempotency keys, seq counted from 1 like the entries they came with. */
  keys: SendKeyRow[];
  versions: VersionRow[];
  /** Webhook messages, entry_seq counted from 1 like the entries that caused them. */
  outbox: OutboxRow[];
  /** The deadline to write; null: keep the stored one. */
  deadline: DueUpdate | null;
}

function appendRows(id: string, at: string, entries: JournalEntryInput[], archive: ArchiveItemInput[]): AppendRows {
  const rows: AppendRows = { journal: [], archive: archive.map((item) => toArchiveRow(id, 0, item)), keys: [], versions: [], outbox: [], deadline: null };
  entries.forEach((entry, i) => {
    rows.journal.push(toJournalRow(id, i + 1, at, entry));
    for (const item of entry.added ?? []) rows.archive.push(toArchiveRow(id, i + 1, item));
    if (entry.sendKey) rows.keys.push({ session_id: id, key: entry.sendKey.key, fingerprint: entry.sendKey.fingerprint, seq: i + 1 });
    rows.outbox.push(...toOutboxRows(id, i + 1, at, entry.outbox));
  });
  return rows;
}
