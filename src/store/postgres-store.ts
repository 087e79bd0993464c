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
import { ConflictError, LeaseLostError, SessionNotFoundError, UserError } from '../core/errors.js';
import { quotedSetting } from '../core/limits.js';
import { toJson } from './store-json.js';
import { revisionConflict } from './memory-store.js';
import { translateConnectError } from './postgres-errors.js';
import { Listener } from './postgres-listener.js';
import { PgEventBus } from './postgres-events.js';
import { leasedLoadOf, leaseHolder, PgLeases, type HolderRow } from './postgres-leases.js';
import { appendStatement, archiveColumns, versionColumns, type WriteGrant } from './postgres-append.js';
import { thisProcess } from './holder-process.js';
import { PgRenewals, type Query } from './postgres-renewals.js';
import { DEFAULT_PG_SCHEMA, migrateSchema, quotedSchema } from './postgres-schema.js';
import { sessionColumns, toStoredSession, type SessionRow } from './postgres-rows.js';
import { StatementNames } from './postgres-prepared.js';
import { redactUrl } from '../core/models/redact.js';
import { durabilityOption, flushesCommit, type Durability } from './session-store.js';
import { listRequest, pageOf } from './list-page.js';
import { outboxColumns, PgOutbox } from './postgres-outbox.js';
import type { OutboxOps } from './outbox.js';
import { checkSessionId } from '../ids.js';
import { deadlineInput, deadlineOfRow, dueRequest, type DueDeadline } from './stored-deadline.js';

import type {
  AcquiringAppend,
  AppendInput,
  CreateInput,
  SendKeyRecord,
  StoredPackageVersion,
  ArchiveItem,
  ArchiveItemInput,
  JournalEntry,
  SessionChange,
  SessionStore,
  ListOptions,
  SessionPage,
  StoredSession,
  WatchOptions,
} from './session-store.js';

export { redactUrl };
export { PG_SCHEMA_VERSION } from './postgres-schema.js';

/**
 * Connections the store's own pool may open. Each store call holds one for its round trip,
 * so with many sessions writing at once a small pool queues them, and a send's time in the
 * store grows with the queue (bench/README.md, "Load", compares pool sizes). Not larger,
 * because several servers share the database's `max_connections` (100 by default).
 */
export const DEFAULT_PG_POOL_SIZE = 20;

/**
 * The smallest pool: a server may hold two connections for good with LISTEN (its live
 * events across servers, and `watch`), and queries need at least one more.
 */
const MIN_PG_POOL_SIZE = 3;

export interface PostgresStoreOptions {
  /** PostgreSQL schema for Steward's tables (default "steward"); created if missing. */
  schema?: string;
  /**
   * 'acknowledged' (default): a write marked `durable: false` (inside a model loop) commits
   * with `synchronous_commit=off` for that transaction only; the next durable commit flushes
   * the WAL up to its own record, and so every write before it. 'every-event': every commit
   * waits for its WAL flush.
   */
  durability?: Durability;
  /**
   * Connections the store's own pool opens at most (default DEFAULT_PG_POOL_SIZE; the CLI
   * reads STEWARD_PG_POOL). Ignored when the store is given an app's pg.Pool.
   */
  poolSize?: number;
  /**
   * Named prepared statements (default true: see postgres-prepared.ts). False behind a
   * pooler in transaction mode that keeps no prepared statements; the CLI reads
   * STEWARD_PG_PREPARED=off.
   */
  preparedStatements?: boolean;
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

/**
 * Sessions in PostgreSQL: every process and server on the same database shares them, each session run by the one that holds its lease.
 *
 * @example
 * const store = new PostgresStore(process.env.DATABASE_URL!, { schema: 'steward' });
 * const runtime = createRuntime({ model, store });
 * await store.close();
 */
export class PostgresStore implements SessionStore {
  readonly kind = 'postgres';
  /** Where the store points, password removed: safe to print. */
  readonly target: string;
  readonly schema: string;
  readonly durability: Durability;
  private readonly pool: pg.Pool;
  private readonly ownsPool: boolean;
  private readonly S: string;
  /** Names of the prepared statements; null: every query is sent unnamed. */
  private readonly statements: StatementNames | null;
  private readonly channel: string;
  private readyPromise: Promise<void> | null = null;
  private listener: Listener | null = null;
  private closed = false;
  /** Leases for several servers on this database (docs/design.md "Leases and takeover"). */
  readonly leases: PgLeases;
  /** Live session events across servers: NOTIFY on steward_events_<schema>. */
  readonly events: PgEventBus;
  private readonly renewals: PgRenewals;
  /** The webhook outbox, written in the statement of the entries that cause its messages. */
  readonly outbox: OutboxOps;

  /** `connection`: a postgres:// URL (the store owns and ends its pool) or an app's pg.Pool (left open). */
  constructor(connection: string | pg.Pool, options: PostgresStoreOptions = {}) {
    this.schema = options.schema ?? DEFAULT_PG_SCHEMA;
    this.durability = durabilityOption(options.durability, 'PostgresStore');
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(this.schema)) {
      throw new UserError(
        `PostgreSQL schema name "${this.schema}" is not allowed: use lower-case letters, digits and _ (at most 63, not starting with a digit).`,
      );
    }
    this.S = quotedSchema(this.schema);
    this.statements = options.preparedStatements === false ? null : new StatementNames();
    this.channel = `steward_changes_${this.schema}`;
    if (typeof connection === 'string') {
      this.target = redactUrl(connection);
      this.pool = new pg.Pool({ connectionString: connection, max: poolSizeOption(options.poolSize) });
      this.ownsPool = true;
    } else {
      this.target = describePool(connection);
      this.pool = connection;
      this.ownsPool = false;
    }
    // An idle client's error (server restart) must not crash the process: the next query
    // reconnects. An app's own pool keeps the app's handling.
    if (this.ownsPool) this.pool.on('error', () => {});
    const query: Query = (sql, params) => this.query(sql, params);
    // Renewals on a connection of their own when the store owns its pool (postgres-renewals.ts).
    const own = typeof connection === 'string' ? () => new pg.Client({ connectionString: connection }) : null;
    this.renewals = new PgRenewals(this.S, query, own, () => this.ready());
    this.leases = new PgLeases(query, this.S, this.renewals, thisProcess(), (input, grant) => this.appendGranting(input, grant));
    this.events = new PgEventBus(this.pool, query, `steward_events_${this.schema}`, this.S, this.target);
    this.outbox = new PgOutbox(query, this.S, (listener) => this.watch(() => listener()));
  }

  /** Connects and brings the schema up to date; every method awaits it. Throws StoreUnavailableError. */
  ready(): Promise<void> {
    this.readyPromise ??= this.migrate().catch((error: unknown) => {
      this.readyPromise = null; // let a later call try again (the server may come up)
      throw error;
    });
    return this.readyPromise;
  }

  async create(session: CreateInput): Promise<StoredSession> {
    checkSessionId(session.id, 'PostgresStore.create');
    const deadline = deadlineInput(session.deadline, session.id) ?? null;
    const snapshot = toJson(session.snapshot, `the snapshot of session "${session.id}"`);
    const payload = toJson(session.entry.payload, `the payload of "${session.entry.type}" in session "${session.id}"`);
    const participants = [...new Set(session.participants ?? [])];
    // One statement: the session row, its first journal entry and its participants commit together.
    const sql = `
      WITH s AS (
        INSERT INTO ${this.S}.sessions (id, package_id, revision, last_seq, snapshot, state, created_at, updated_at, touched, owner, due_at, due_wait, due_level)
        VALUES ($1, $2, 1, 1, $3::json, $4, now(), now(), nextval('${this.S}.write_order'), $15, $21::timestamptz, $22::integer, $23::integer)
        RETURNING ${sessionColumns(this.S)}
      ), w AS (
        INSERT INTO ${this.S}.session_participants (session_id, who, ord)
        SELECT s.id, x.who, x.ord - 1 FROM s, unnest($16::text[]) WITH ORDINALITY AS x(who, ord)
      ), j AS (
        INSERT INTO ${this.S}.journal (session_id, seq, at, kind, type, payload, state)
        SELECT id, 1, created_at, $5, $6, $7::json, $4 FROM s
      ), a AS (
        INSERT INTO ${this.S}.archive (session_id, kind, key, n, entry_seq, value)
        SELECT s.id, x.kind, x.key, x.n, 1, x.value::json FROM s, unnest($8::text[], $9::text[], $10::int[], $11::text[]) AS x(kind, key, n, value)
      ), v AS (
        INSERT INTO ${this.S}.package_versions (hash, package_id, content)
        SELECT x.hash, x.package_id, x.content FROM s, unnest($12::text[], $13::text[], $14::text[]) AS x(hash, package_id, content)
        ON CONFLICT (hash) DO NOTHING
      ), o AS (
        INSERT INTO ${this.S}.webhook_outbox (id, receiver, session_id, entry_seq, type, payload, created_at)
        SELECT x.id, x.receiver, s.id, 1, x.type, x.payload::json, s.created_at
        FROM s, unnest($17::text[], $18::text[], $19::text[], $20::text[]) AS x(id, receiver, type, payload)
      )
      SELECT * FROM s`;
    const versions = versionColumns(session.packageVersions);
    const added = archiveColumns(
      session.id,
      (session.entry.added ?? []).map((item) => ({ item, ord: 1 })),
    );
    const outbox = outboxColumns(
      session.id,
      (session.entry.outbox ?? []).map((input) => ({ input, ord: 1 })),
    );
    try {
      const { rows } = await this.query<SessionRow>(sql, [
        session.id,
        session.packageId,
        snapshot,
        session.entry.state,
        session.entry.kind,
        session.entry.type,
        payload,
        added.kinds,
        added.keys,
        added.ns,
        added.values,
        versions.hashes,
        versions.packageIds,
        versions.contents,
        session.owner ?? null,
        participants,
        outbox.ids,
        outbox.receivers,
        outbox.types,
        outbox.payloads,
        deadline?.dueAt ?? null,
        deadline?.wait ?? null,
        deadline?.level ?? null,
      ]);
      // The statement's RETURNING reads the participants as they were before it: none.
      return { ...toStoredSession(rows[0]!), participants };
    } catch (error) {
      if ((error as { code?: string }).code === '23505') {
        throw new ConflictError(`Session "${session.id}" already exists; pick another id or load the existing session.`);
      }
      throw error;
    }
  }

  async load(id: string): Promise<StoredSession | undefined> {
    const { rows } = await this.query<SessionRow>(`SELECT ${sessionColumns(this.S)} FROM ${this.S}.sessions WHERE id = $1`, [id]);
    return rows[0] ? toStoredSession(rows[0]) : undefined;
  }

  async append(input: AppendInput): Promise<number> {
    const { id, expectedRevision } = input;
    const { sql, params } = this.appendSql(input, null);
    const { rows } = await this.query<{ revision: number }>(sql, params);
    if (rows[0]) return rows[0].revision;
    const current = await this.query<{ revision: number }>(`SELECT revision FROM ${this.S}.sessions WHERE id = $1`, [id]);
    if (!current.rows[0]) throw new SessionNotFoundError(id);
    if (current.rows[0].revision !== expectedRevision) throw revisionConflict(id, current.rows[0].revision, expectedRevision);
    if (input.lease) throw new LeaseLostError(id);
    const holder = await leaseHolder((sql, params) => this.query(sql, params), this.S, id);
    throw new ConflictError(
      `Session "${id}" is leased by another server (${holder?.owner ?? 'a server'}) that is running it: nothing was written. ` +
        'Send events through `steward serve` (any server), or wait until it waits for you.',
    );
  }

  /** The statement of a write (with `grant`: one that takes the lease too); a write that need not reach the disk defers its flush. */
  private appendSql(input: AppendInput, grant: WriteGrant | null): { sql: string; params: unknown[] } {
    return appendStatement(this.S, input, { grant, deferFlush: !flushesCommit(this.durability, input) });
  }

  /** LeaseOps.appendAcquiring: the write and the lease in one statement (postgres-append.ts). */
  private async appendGranting(input: AppendInput, grant: WriteGrant): Promise<AcquiringAppend> {
    const { id } = input;
    const { sql, params } = this.appendSql({ ...input, lease: undefined }, grant);
    const { rows } = await this.query<GrantingRow>(sql, params);
    const row = rows[0]!;
    if (row.written !== null) return { revision: row.written, lease: { sessionId: id, owner: grant.owner, token: Number(row.lease_token) } };
    if (row.id === null) throw new SessionNotFoundError(id);
    return { stale: leasedLoadOf(row as GrantingRow & SessionRow, id, grant.owner) };
  }

  async archived(id: string, kind: ArchiveItemInput['kind'], key: string, options: { from?: number; to?: number } = {}): Promise<ArchiveItem[]> {
    const { rows } = await this.query<{ kind: ArchiveItemInput['kind']; key: string; n: number; entry_seq: number; value: unknown }>(
      `SELECT kind, key, n, entry_seq, value FROM ${this.S}.archive
       WHERE session_id = $1 AND kind = $2 AND key = $3 AND n BETWEEN $4 AND $5 ORDER BY n`,
      [id, kind, key, Math.max(-2147483648, Math.floor(options.from ?? -2147483648)), Math.min(2147483647, Math.floor(options.to ?? 2147483647))],
    );
    return rows.map((row) => ({ kind: row.kind, key: row.key, n: row.n, entrySeq: row.entry_seq, value: row.value }));
  }

  async packageVersion(hash: string): Promise<StoredPackageVersion | undefined> {
    const { rows } = await this.query<{ hash: string; package_id: string; content: string }>(
      `SELECT hash, package_id, content FROM ${this.S}.package_versions WHERE hash = $1`,
      [hash],
    );
    return rows[0] ? { hash: rows[0].hash, packageId: rows[0].package_id, json: rows[0].content } : undefined;
  }

  async sendKey(id: string, key: string): Promise<SendKeyRecord | undefined> {
    const { rows } = await this.query<{ key: string; fingerprint: string; seq: number; result: unknown }>(
      `SELECT key, fingerprint, seq, result FROM ${this.S}.send_keys WHERE session_id = $1 AND key = $2`,
      [id, key],
    );
    return rows[0] ? { key: rows[0].key, fingerprint: rows[0].fingerprint, seq: rows[0].seq, result: rows[0].result } : undefined;
  }

  async saveSendResult(id: string, key: string, result: unknown): Promise<void> {
    const json = toJson(result, `the result of the send with key "${key}" of session "${id}"`);
    await this.query(`UPDATE ${this.S}.send_keys SET result = $3::json WHERE session_id = $1 AND key = $2`, [id, key, json]);
  }

  async journal(id: string, options: { afterSeq?: number; limit?: number } = {}): Promise<JournalEntry[]> {
    // LIMIT NULL means "no limit"; a negative caller limit means "none", as in MemoryStore.
    const limit = options.limit === undefined ? null : Math.max(0, Math.floor(options.limit));
    const { rows } = await this.query<JournalRow>(
      // bigint: \`afterSeq\` may be any safe integer (seq is an integer column; past its range nothing follows).
      `SELECT * FROM ${this.S}.journal WHERE session_id = $1 AND seq > $2::bigint ORDER BY seq LIMIT $3`,
      [id, Math.min(Number.MAX_SAFE_INTEGER, Math.floor(options.afterSeq ?? 0)), limit],
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

  async list(options?: ListOptions): Promise<SessionPage> {
    const { limit, after } = listRequest(options);
    const access = options?.visibleTo;
    // The position keeps updated_at's microseconds: a cursor rounded to milliseconds would
    // skip or repeat the rows of its millisecond.
    const columns = `id, package_id, revision, state, created_at, updated_at, owner,
         ARRAY(SELECT p.who FROM ${this.S}.session_participants p WHERE p.session_id = id ORDER BY p.ord) AS participants,
         to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS position`;
    const { rows } = access
      ? // A caller's page (ListOptions.visibleTo), the same keyset walk: the owner's next rows by
        // sessions_of_owner from the cursor on, and the next rows shared with one of $3 (by
        // session_participants_by_who), each at most a page; the page is cut from both.
        await this.query<SessionRow & { position: string }>(
          `WITH visible AS (
             (SELECT id FROM ${this.S}.sessions
              WHERE owner = $2 AND (updated_at, id COLLATE "C") < ($4::timestamptz, $5::text)
              ORDER BY updated_at DESC, id COLLATE "C" DESC LIMIT $1)
             UNION
             -- Grouped: a session shared with two of $3 is one row of the page.
             (SELECT s.id FROM ${this.S}.session_participants p JOIN ${this.S}.sessions s ON s.id = p.session_id
              WHERE p.who = ANY($3::text[]) AND (s.updated_at, s.id COLLATE "C") < ($4::timestamptz, $5::text)
              GROUP BY s.id, s.updated_at
              ORDER BY s.updated_at DESC, s.id COLLATE "C" DESC LIMIT $1)
           )
           SELECT ${columns} FROM ${this.S}.sessions WHERE id IN (SELECT id FROM visible)
           ORDER BY updated_at DESC, id COLLATE "C" DESC LIMIT $1`,
          // The first page starts after 'infinity', a position every row sorts before.
          [limit + 1, access.owner, access.participants, after?.updatedAt ?? 'infinity', after?.id ?? ''],
        )
      : await this.query<SessionRow & { position: string }>(
          `SELECT ${columns}
       FROM ${this.S}.sessions
       ${after ? `WHERE (updated_at, id COLLATE "C") < ($2::timestamptz, $3::text)` : ''}
       ORDER BY updated_at DESC, id COLLATE "C" DESC LIMIT $1`,
          after ? [limit + 1, after.updatedAt, after.id] : [limit + 1],
        );
    return pageOf(
      rows,
      limit,
      (row) => ({ updatedAt: row.position, id: row.id }),
      (row) => ({
        id: row.id,
        packageId: row.package_id,
        revision: row.revision,
        state: row.state,
        createdAt: row.created_at.toISOString(),
        updatedAt: row.updated_at.toISOString(),
        owner: row.owner,
        participants: row.participants ?? [],
      }),
    );
  }

  async dueDeadlines(now: string, limit: number): Promise<DueDeadline[]> {
    const request = dueRequest(now, limit);
    // By the partial index sessions_due: only sessions with a deadline are read.
    const { rows } = await this.query<{ id: string; due_at: Date; due_wait: number; due_level: number }>(
      `SELECT id, due_at, due_wait, due_level FROM ${this.S}.sessions
       WHERE due_at IS NOT NULL AND due_at <= $1::timestamptz
       ORDER BY due_at, id COLLATE "C" LIMIT $2`,
      [request.now, request.limit],
    );
    return rows.map((row) => ({ sessionId: row.id, deadline: deadlineOfRow(row.id, row.due_at.toISOString(), row.due_wait, row.due_level)! }));
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
    return this.listener.subscribe({ listener, sessionId: options.sessionId, onError: options.onError });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.listener?.close();
    this.listener = null;
    await this.events.close();
    await this.renewals.close();
    if (this.ownsPool) await this.pool.end();
  }

  private async query<R extends pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<pg.QueryResult<R>> {
    await this.ready();
    try {
      return await this.pool.query<R>(this.statements ? this.statements.config(sql, params) : { text: sql, ...(params ? { values: params } : {}) });
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
      await migrateSchema(client, { schema: this.schema, channel: this.channel, target: this.target });
    } finally {
      client.release();
    }
  }
}

/** A pool size the store accepts: whole, at least MIN_PG_POOL_SIZE, at most 1000. */
const isPoolSize = (size: number) => Number.isInteger(size) && size >= MIN_PG_POOL_SIZE && size <= 1000;

function poolSizeOption(size: number | undefined): number {
  if (size === undefined) return DEFAULT_PG_POOL_SIZE;
  if (isPoolSize(size)) return size;
  throw new UserError(
    `PostgresStore poolSize is ${String(size)}: give a whole number of connections from ${MIN_PG_POOL_SIZE} (two may be held by LISTEN, queries need one more) to 1000 (default ${DEFAULT_PG_POOL_SIZE}).`,
  );
}

/** The pool size the CLI's STEWARD_PG_POOL asks for, undefined when unset. */
export function poolSizeFromEnv(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const value = env.STEWARD_PG_POOL;
  if (!value) return undefined;
  if (/^\d+$/.test(value) && isPoolSize(Number(value))) return Number(value);
  throw new UserError(
    `STEWARD_PG_POOL is ${quotedSetting(value)}, which is not a pool size. Set it to a whole number of connections from ${MIN_PG_POOL_SIZE} to 1000, or unset it (default ${DEFAULT_PG_POOL_SIZE}).`,
  );
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

/** What a granting write's statement answers (postgres-append.ts): the session's columns only when it was not written. */
type GrantingRow = { [K in keyof SessionRow]: SessionRow[K] | null } & { written: number | null; lease_token: string | null; holder: HolderRow | null };
