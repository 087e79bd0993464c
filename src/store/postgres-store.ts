/**
 * SessionStore on PostgreSQL (node-postgres), for several processes or servers on one
 * database. Same guarantees as SqliteStore: an event is journalled with its snapshot in one
 * statement (so one transaction), `revision` is the optimistic-concurrency token, `seq` is
 * gapless per session, and the schema is versioned with append-only migrations.
 *
 * Cross-process live updates: a trigger NOTIFYs every committed write, and `watch()`
 * LISTENs on one dedicated connection. Only this file imports `pg`, so apps that never use
 * PostgreSQL never load it (src/store/open-store.ts imports this module on demand).
 */
import pg from 'pg';
import { ConflictError, SessionNotFoundError, StoreUnavailableError, UserError } from '../errors.js';
import { revisionConflict } from './memory-store.js';
import { redactUrl } from './redact-url.js';
import type {
  JournalEntry,
  JournalEntryInput,
  SessionChange,
  SessionStore,
  SessionSummary,
  StoredSession,
  WatchOptions,
} from './session-store.js';

/** The schema this code reads and writes, kept in `<schema>.schema_version`. */
export const PG_SCHEMA_VERSION = 1;

export { redactUrl };

/** The default PostgreSQL schema (namespace) Steward's tables live in. */
export const DEFAULT_PG_SCHEMA = 'steward';

/**
 * migrations[n] takes the schema from version n to n + 1; `S` is the quoted schema name.
 * Append only; never edit a shipped step. A lease table (see docs/design.md) is step 2.
 */
const migrations: Array<(S: string, channel: string) => string> = [
  (S, channel) => `
    CREATE TABLE ${S}.sessions (
      id          text PRIMARY KEY,
      package_id  text,
      revision    integer NOT NULL,
      last_seq    integer NOT NULL,
      snapshot    json NOT NULL,
      state       text NOT NULL,
      created_at  timestamptz NOT NULL,
      updated_at  timestamptz NOT NULL,
      -- Store-wide write order: breaks ties in list() when two writes share a timestamp.
      touched     bigint NOT NULL
    );
    CREATE SEQUENCE ${S}.write_order;
    CREATE TABLE ${S}.journal (
      session_id  text NOT NULL REFERENCES ${S}.sessions(id),
      seq         integer NOT NULL,
      at          timestamptz NOT NULL,
      kind        text NOT NULL,
      type        text NOT NULL,
      payload     json NOT NULL,
      state       text NOT NULL,
      PRIMARY KEY (session_id, seq)
    );
    CREATE INDEX sessions_by_update ON ${S}.sessions (updated_at DESC, touched DESC);
    -- Every committed write is announced (NOTIFY is delivered at commit, never for a rollback).
    CREATE FUNCTION ${S}.notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify(${quoteLiteral(channel)}, json_build_object(
        'sessionId', NEW.id, 'revision', NEW.revision, 'lastSeq', NEW.last_seq, 'state', NEW.state)::text);
      RETURN NULL;
    END $$;
    CREATE TRIGGER sessions_changed AFTER INSERT OR UPDATE ON ${S}.sessions
      FOR EACH ROW EXECUTE FUNCTION ${S}.notify_change();`,
];

export interface PostgresStoreOptions {
  /** PostgreSQL schema for Steward's tables (default "steward"); created if missing. */
  schema?: string;
}

interface SessionRow {
  id: string;
  package_id: string | null;
  revision: number;
  snapshot: unknown;
  state: string;
  created_at: Date;
  updated_at: Date;
}

interface JournalRow {
  session_id: string;
  seq: number;
  at: Date;
  kind: JournalEntry['kind'];
  type: string;
  payload: unknown;
  state: string;
}

export class PostgresStore implements SessionStore {
  /** Where the store points, password removed: safe to print. */
  readonly target: string;
  readonly schema: string;
  private readonly pool: pg.Pool;
  private readonly ownsPool: boolean;
  private readonly S: string;
  private readonly channel: string;
  private readyPromise: Promise<void> | null = null;
  private listener: Listener | null = null;
  private closed = false;

  /** `connection`: a postgres:// URL (the store owns and ends its pool) or an app's pg.Pool (left open). */
  constructor(connection: string | pg.Pool, options: PostgresStoreOptions = {}) {
    this.schema = options.schema ?? DEFAULT_PG_SCHEMA;
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(this.schema)) {
      throw new UserError(`PostgreSQL schema name "${this.schema}" is not allowed: use lower-case letters, digits and _ (at most 63, not starting with a digit).`);
    }
    this.S = `"${this.schema}"`;
    this.channel = `steward_changes_${this.schema}`;
    if (typeof connection === 'string') {
      this.target = redactUrl(connection);
      this.pool = new pg.Pool({ connectionString: connection, max: 10 });
      this.ownsPool = true;
    } else {
      this.target = describePool(connection);
      this.pool = connection;
      this.ownsPool = false;
    }
    // An idle client's error (server restart) must not crash the process: the next query
    // reconnects. An app's own pool keeps the app's handling.
    if (this.ownsPool) this.pool.on('error', () => {});
  }

  /** Connects and brings the schema up to date; every method awaits it. Throws StoreUnavailableError. */
  ready(): Promise<void> {
    this.readyPromise ??= this.migrate().catch((error: unknown) => {
      this.readyPromise = null; // let a later call try again (the server may come up)
      throw error;
    });
    return this.readyPromise;
  }

  async create(session: { id: string; packageId: string | null; snapshot: unknown; entry: JournalEntryInput }): Promise<StoredSession> {
    const snapshot = toJson(session.snapshot, `the snapshot of session "${session.id}"`);
    const payload = toJson(session.entry.payload, `the payload of "${session.entry.type}" in session "${session.id}"`);
    // One statement: the session row and its first journal entry commit together.
    const sql = `
      WITH s AS (
        INSERT INTO ${this.S}.sessions (id, package_id, revision, last_seq, snapshot, state, created_at, updated_at, touched)
        VALUES ($1, $2, 1, 1, $3::json, $4, now(), now(), nextval('${this.S}.write_order'))
        RETURNING id, package_id, revision, snapshot, state, created_at, updated_at
      ), j AS (
        INSERT INTO ${this.S}.journal (session_id, seq, at, kind, type, payload, state)
        SELECT id, 1, created_at, $5, $6, $7::json, $4 FROM s
      )
      SELECT * FROM s`;
    try {
      const { rows } = await this.query<SessionRow>(sql, [session.id, session.packageId, snapshot, session.entry.state, session.entry.kind, session.entry.type, payload]);
      return toStoredSession(rows[0]!);
    } catch (error) {
      if ((error as { code?: string }).code === '23505') {
        throw new ConflictError(`Session "${session.id}" already exists; pick another id or load the existing session.`);
      }
      throw error;
    }
  }

  async load(id: string): Promise<StoredSession | undefined> {
    const { rows } = await this.query<SessionRow>(
      `SELECT id, package_id, revision, snapshot, state, created_at, updated_at FROM ${this.S}.sessions WHERE id = $1`,
      [id],
    );
    return rows[0] ? toStoredSession(rows[0]) : undefined;
  }

  async append(id: string, expectedRevision: number, entries: JournalEntryInput[], snapshot: unknown): Promise<number> {
    // Serialise before talking to the server: a bad value fails before anything is locked.
    const json = toJson(snapshot, `the snapshot of session "${id}"`);
    const payloads = entries.map((e) => toJson(e.payload, `the payload of "${e.type}" in session "${id}"`));
    // The UPDATE's WHERE is the revision check: a concurrent writer waits for our row lock,
    // then re-checks the revision and matches nothing. Journal rows ride in the same statement.
    const sql = `
      WITH u AS (
        UPDATE ${this.S}.sessions SET revision = revision + 1, last_seq = last_seq + $3, snapshot = $4::json,
          state = COALESCE($5, state), updated_at = now(), touched = nextval('${this.S}.write_order')
        WHERE id = $1 AND revision = $2
        RETURNING revision, last_seq - $3 AS base, updated_at
      ), j AS (
        INSERT INTO ${this.S}.journal (session_id, seq, at, kind, type, payload, state)
        SELECT $1, u.base + e.ord, u.updated_at, e.kind, e.type, e.payload::json, e.state
        FROM u, unnest($6::text[], $7::text[], $8::text[], $9::text[]) WITH ORDINALITY AS e(kind, type, payload, state, ord)
      )
      SELECT revision FROM u`;
    const { rows } = await this.query<{ revision: number }>(sql, [
      id,
      expectedRevision,
      entries.length,
      json,
      entries.at(-1)?.state ?? null,
      entries.map((e) => e.kind),
      entries.map((e) => e.type),
      payloads,
      entries.map((e) => e.state),
    ]);
    if (rows[0]) return rows[0].revision;
    const current = await this.query<{ revision: number }>(`SELECT revision FROM ${this.S}.sessions WHERE id = $1`, [id]);
    if (!current.rows[0]) throw new SessionNotFoundError(id);
    throw revisionConflict(id, current.rows[0].revision, expectedRevision);
  }

  async journal(id: string, options: { afterSeq?: number; limit?: number } = {}): Promise<JournalEntry[]> {
    // LIMIT NULL means "no limit"; a negative caller limit means "none", as in MemoryStore.
    const limit = options.limit === undefined ? null : Math.max(0, Math.floor(options.limit));
    const { rows } = await this.query<JournalRow>(
      `SELECT * FROM ${this.S}.journal WHERE session_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
      [id, Math.floor(options.afterSeq ?? 0), limit],
    );
    return rows.map((row) => ({
      sessionId: row.session_id,
      seq: row.seq,
      at: row.at.toISOString(),
      kind: row.kind,
      type: row.type,
      payload: row.payload,
      state: row.state,
    }));
  }

  async list(): Promise<SessionSummary[]> {
    const { rows } = await this.query<SessionRow>(
      `SELECT id, package_id, revision, state, created_at, updated_at FROM ${this.S}.sessions ORDER BY updated_at DESC, touched DESC`,
    );
    return rows.map((row) => ({
      id: row.id,
      packageId: row.package_id,
      revision: row.revision,
      state: row.state,
      createdAt: row.created_at.toISOString(),
      updatedAt: row.updated_at.toISOString(),
    }));
  }

  /**
   * Calls `listener` after every committed write to a session (of any process on this
   * database), or only `options.sessionId`'s. Resolves once listening: a write committed
   * after that is never missed. Delivery is at least once (after a lost connection the
   * sessions changed meanwhile are re-announced); compare `revision` to skip repeats.
   */
  async watch(listener: (change: SessionChange) => void, options: WatchOptions = {}): Promise<() => Promise<void>> {
    await this.ready();
    this.listener ??= new Listener(this.pool, this.channel, this.S, this.target);
    const entry = { listener, sessionId: options.sessionId, onError: options.onError };
    await this.listener.add(entry);
    let done = false;
    return async () => {
      if (done) return;
      done = true;
      await this.listener?.remove(entry);
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.listener?.close();
    this.listener = null;
    if (this.ownsPool) await this.pool.end();
  }

  private async query<R extends pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<pg.QueryResult<R>> {
    await this.ready();
    try {
      return await this.pool.query<R>(sql, params);
    } catch (error) {
      throw translateConnectError(error, this.target) ?? error;
    }
  }

  private async migrate(): Promise<void> {
    if (this.closed) throw new UserError('This PostgresStore is closed; open a new one.');
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw translateConnectError(error, this.target) ?? error;
    }
    try {
      const version = async () => {
        const exists = await client.query(`SELECT to_regclass($1) AS t`, [`${this.S}.schema_version`]);
        if (!exists.rows[0].t) return 0;
        const { rows } = await client.query(`SELECT max(version) AS v FROM ${this.S}.schema_version`);
        return Number(rows[0].v ?? 0);
      };
      const seen = await version();
      if (seen > PG_SCHEMA_VERSION) throw newerSchema(this.target, this.schema, seen);
      if (seen === PG_SCHEMA_VERSION) return;
      // A transaction-scoped advisory lock: two servers opening a fresh database at once
      // migrate it only once; the second re-reads the version after the first commits.
      await client.query('BEGIN');
      try {
        await client.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`steward-migrate:${this.schema}`]);
        await client.query(`CREATE SCHEMA IF NOT EXISTS ${this.S}`);
        await client.query(`CREATE TABLE IF NOT EXISTS ${this.S}.schema_version (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
        const from = await version();
        if (from > PG_SCHEMA_VERSION) throw newerSchema(this.target, this.schema, from);
        for (let v = from; v < PG_SCHEMA_VERSION; v++) {
          await client.query(migrations[v]!(this.S, this.channel));
          await client.query(`INSERT INTO ${this.S}.schema_version (version) VALUES ($1)`, [v + 1]);
        }
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw error;
      }
    } finally {
      client.release();
    }
  }
}

interface ListenerEntry {
  listener: (change: SessionChange) => void;
  sessionId: string | undefined;
  onError: ((error: unknown) => void) | undefined;
}

/**
 * One LISTEN connection per store, outside the pool's rotation (a pooled client would
 * be handed to queries that do not expect notifications). Reconnects after a loss and
 * re-announces the sessions written meanwhile.
 */
class Listener {
  private readonly entries = new Set<ListenerEntry>();
  private client: pg.PoolClient | null = null;
  private connecting: Promise<void> | null = null;
  private lastSeen: Date | null = null;
  private closed = false;
  private retry: NodeJS.Timeout | null = null;

  constructor(
    private readonly pool: pg.Pool,
    private readonly channel: string,
    private readonly S: string,
    private readonly target: string,
  ) {}

  async add(entry: ListenerEntry): Promise<void> {
    this.entries.add(entry);
    await this.connect();
  }

  async remove(entry: ListenerEntry): Promise<void> {
    this.entries.delete(entry);
    if (this.entries.size === 0) await this.disconnect();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.entries.clear();
    await this.disconnect();
  }

  private connect(): Promise<void> {
    if (this.client) return Promise.resolve();
    this.connecting ??= (async () => {
      let client: pg.PoolClient;
      try {
        client = await this.pool.connect();
      } catch (error) {
        throw translateConnectError(error, this.target) ?? error;
      }
      client.on('notification', (message) => {
        if (message.channel !== this.channel || !message.payload) return;
        this.lastSeen = new Date();
        this.dispatch(JSON.parse(message.payload) as SessionChange);
      });
      client.on('error', (error) => this.lost(client, error));
      await client.query(`LISTEN "${this.channel}"`);
      this.client = client;
    })().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private async disconnect(): Promise<void> {
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
    await this.connecting?.catch(() => {});
    const client = this.client;
    this.client = null;
    if (!client) return;
    await client.query(`UNLISTEN "${this.channel}"`).catch(() => {});
    client.release(true); // never hand a LISTENing connection back to the pool
  }

  private lost(client: pg.PoolClient, error: unknown): void {
    if (this.client !== client) return;
    this.client = null;
    client.release(true);
    for (const entry of this.entries) entry.onError?.(error);
    const since = this.lastSeen;
    const again = () => {
      this.retry = null;
      if (this.closed || this.entries.size === 0) return;
      this.connect()
        .then(() => this.catchUp(since))
        .catch((failure: unknown) => {
          for (const entry of this.entries) entry.onError?.(failure);
          this.retry = setTimeout(again, 1000);
          this.retry.unref();
        });
    };
    this.retry = setTimeout(again, 250);
    this.retry.unref();
  }

  /** After a reconnect: announce what was written while nobody listened (a few seconds' margin). */
  private async catchUp(since: Date | null): Promise<void> {
    const { rows } = await this.pool.query<{ id: string; revision: number; last_seq: number; state: string }>(
      `SELECT id, revision, last_seq, state FROM ${this.S}.sessions WHERE $1::timestamptz IS NULL OR updated_at > $1::timestamptz - interval '5 seconds'`,
      [since],
    );
    for (const row of rows) this.dispatch({ sessionId: row.id, revision: row.revision, lastSeq: row.last_seq, state: row.state });
  }

  private dispatch(change: SessionChange): void {
    for (const entry of [...this.entries]) {
      if (entry.sessionId !== undefined && entry.sessionId !== change.sessionId) continue;
      try {
        entry.listener(change);
      } catch (error) {
        // One listener's bug must not stop the others (or kill the connection's handler).
        entry.onError?.(error);
      }
    }
  }
}

/**
 * The PostgreSQL failures a user can fix, as StoreUnavailableError; undefined for others.
 * Messages name the target without its password.
 */
export function translateConnectError(error: unknown, target: string): StoreUnavailableError | undefined {
  const code = (error as { code?: string }).code;
  const detail = (error as Error).message ?? String(error);
  const fixUrl = 'Check STEWARD_DB (or --db): postgres://USER:PASSWORD@HOST:PORT/DATABASE.';
  switch (code) {
    case 'ECONNREFUSED':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'ENOENT': // a Unix socket path that does not exist
      return new StoreUnavailableError(
        'unreachable',
        target,
        `Cannot reach the PostgreSQL server at ${target} (${code}). Start the server, or fix the host and port. ${fixUrl}`,
        { cause: error },
      );
    case '28P01':
    case '28000':
      return new StoreUnavailableError(
        'bad_credentials',
        target,
        `PostgreSQL at ${target} refused the login: ${detail}. Fix the user name and password in the URL (or PGPASSWORD / ~/.pgpass), or the server's pg_hba.conf.`,
        { cause: error },
      );
    case '3D000':
      return new StoreUnavailableError(
        'missing_database',
        target,
        `PostgreSQL at ${target} has no such database: ${detail}. Create it (\`createdb NAME\` or CREATE DATABASE NAME) or name an existing one in the URL.`,
        { cause: error },
      );
    default:
      if (/timeout|terminated unexpectedly|Connection terminated/i.test(detail) && !code) {
        return new StoreUnavailableError('unreachable', target, `Lost the connection to PostgreSQL at ${target}: ${detail}. Check that the server is up. ${fixUrl}`, { cause: error });
      }
      return undefined;
  }
}

function describePool(pool: pg.Pool): string {
  const options = pool.options as pg.PoolConfig;
  if (options.connectionString) return redactUrl(options.connectionString);
  const user = options.user ?? process.env.PGUSER ?? '';
  const host = options.host ?? process.env.PGHOST ?? 'localhost';
  const port = options.port ?? process.env.PGPORT ?? 5432;
  const database = options.database ?? process.env.PGDATABASE ?? user;
  return `postgres://${user ? `${user}@` : ''}${host}:${port}/${database}`;
}

function newerSchema(target: string, schema: string, found: number): UserError {
  return new UserError(
    `The PostgreSQL schema "${schema}" at ${target} has Steward schema version ${found}, but this Steward supports up to ${PG_SCHEMA_VERSION}. ` +
      `Upgrade Steward, or point it at another database or schema.`,
  );
}

function quoteLiteral(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

function toStoredSession(row: SessionRow): StoredSession {
  return {
    id: row.id,
    packageId: row.package_id,
    revision: row.revision,
    snapshot: row.snapshot,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

function toJson(value: unknown, what: string): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch (error) {
    throw new UserError(`Cannot store ${what}: ${(error as Error).message}.`, { cause: error });
  }
  if (json === undefined) throw new UserError(`Cannot store ${what}: it is not JSON-serialisable (got ${typeof value}).`);
  return json;
}
