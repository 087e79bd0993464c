/**
 * The PostgreSQL schema Steward's tables live in: its version, its append-only migrations,
 * and the locked step that brings a database up to date. Kept apart from the store so the
 * store file reads as the queries a session makes.
 */
import type pg from 'pg';
import { UserError } from '../core/errors.js';
import { leaseProcessMigration, leasesMigration } from './postgres-leases.js';
import { outboxMigration } from './postgres-outbox.js';

/** The schema this code reads and writes, kept in `<schema>.schema_version`. */
export const PG_SCHEMA_VERSION = 9;

/** The default PostgreSQL schema (namespace) Steward's tables live in. */
export const DEFAULT_PG_SCHEMA = 'steward';

/**
 * migrations[n] takes the schema from version n to n + 1; `S` is the quoted schema name.
 * Append only; never edit a shipped step. Step 2: the archive; step 3: leases (postgres-leases.ts);
 * step 4: the index list() pages on; step 5: package versions and idempotency keys; step 6: the
 * lease holder's process (postgres-leases.ts); step 7: the webhook outbox (postgres-outbox.ts); step 8:
 * who a session belongs to (its owner and participants); step 9: the open wait's deadline.
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
        'sessionId', NEW.id, 'revision', NEW.revision, 'lastSeq', NEW.last_seq, 'state', NEW.state, 'at', NEW.updated_at)::text);
      RETURN NULL;
    END $$;
    CREATE TRIGGER sessions_changed AFTER INSERT OR UPDATE ON ${S}.sessions
      FOR EACH ROW EXECUTE FUNCTION ${S}.notify_change();`,
  // Step 2: the archive — every transcript message and tag version an event added, so the
  // snapshot can stay bounded. Written in the journal entry's statement.
  (S) => `
    CREATE TABLE ${S}.archive (
      session_id  text NOT NULL REFERENCES ${S}.sessions(id),
      kind        text NOT NULL,
      key         text NOT NULL,
      n           integer NOT NULL,
      entry_seq   integer NOT NULL,
      value       json NOT NULL,
      PRIMARY KEY (session_id, kind, key, n)
    );`,
  (S) => leasesMigration(S),
  // list() pages by keyset on (updated_at, id) — ids in byte order ("C"), whatever the
  // database's locale, as SQLite and MemoryStore sort them. The old index ordered by
  // \`touched\`, which nothing sorts by any more.
  (S) => `
    DROP INDEX IF EXISTS ${S}.sessions_by_update;
    CREATE INDEX IF NOT EXISTS sessions_by_position ON ${S}.sessions (updated_at DESC, id COLLATE "C" DESC);`,
  // Package versions, once per store by content hash (a session is pinned to one in its
  // snapshot), and the idempotency keys of sends, SEND_KEYS_KEPT per session. Rerunnable, like
  // the step before it (a test rolls a schema back to before leases and migrates it again).
  (S) => `
    CREATE TABLE IF NOT EXISTS ${S}.package_versions (
      hash        text PRIMARY KEY,
      package_id  text NOT NULL,
      content     text NOT NULL,
      created_at  timestamptz NOT NULL DEFAULT now()
    );
    CREATE TABLE IF NOT EXISTS ${S}.send_keys (
      session_id   text NOT NULL REFERENCES ${S}.sessions(id),
      key          text NOT NULL,
      fingerprint  text NOT NULL,
      seq          integer NOT NULL,
      result       json,
      PRIMARY KEY (session_id, key)
    );
    CREATE INDEX IF NOT EXISTS send_keys_by_seq ON ${S}.send_keys (session_id, seq);`,
  (S) => leaseProcessMigration(S),
  (S) => outboxMigration(S),
  // Who a session belongs to (src/store/participants.ts): its owner, a column (null: created by
  // no named caller), and its participants, a side table written once with the session, so that
  // list() filters in its query. The owner's index is partial: a store whose sessions have no
  // owner (a shared token, the CLI) pays nothing for it on its writes. Rerunnable.
  (S) => `
    ALTER TABLE ${S}.sessions ADD COLUMN IF NOT EXISTS owner text;
    CREATE TABLE IF NOT EXISTS ${S}.session_participants (
      session_id  text NOT NULL REFERENCES ${S}.sessions(id),
      who         text NOT NULL,
      ord         integer NOT NULL,
      PRIMARY KEY (session_id, who)
    );
    CREATE INDEX IF NOT EXISTS session_participants_by_who ON ${S}.session_participants (who, session_id);
    CREATE INDEX IF NOT EXISTS sessions_of_owner ON ${S}.sessions (owner, updated_at DESC, id COLLATE "C" DESC) WHERE owner IS NOT NULL;`,
  // The open wait's deadline (stored-deadline.ts): three columns written in the statement of the
  // entry that set it (all null: none), so a restart or another server finds the same due time.
  // The index is partial: a scan for due ones reads only the sessions that have a deadline, and a
  // write to a session without one pays nothing for it. Rerunnable.
  (S) => `
    ALTER TABLE ${S}.sessions ADD COLUMN IF NOT EXISTS due_at timestamptz,
      ADD COLUMN IF NOT EXISTS due_wait integer, ADD COLUMN IF NOT EXISTS due_level integer;
    CREATE INDEX IF NOT EXISTS sessions_due ON ${S}.sessions (due_at, id COLLATE "C") WHERE due_at IS NOT NULL;`,
];

/** The schema's name as SQL quotes it (names are checked as plain identifiers first). */
export const quotedSchema = (schema: string) => `"${schema}"`;

/** Where a migration runs: the schema's name, its change channel, and the database for messages. */
export interface SchemaTarget {
  schema: string;
  channel: string;
  target: string;
}

/**
 * Brings the schema on `client` to PG_SCHEMA_VERSION. A transaction-scoped advisory lock
 * makes two servers opening a fresh database at once migrate it only once; the second
 * re-reads the version after the first commits.
 */
export async function migrateSchema(client: pg.PoolClient, { schema, channel, target }: SchemaTarget): Promise<void> {
  const S = quotedSchema(schema);
  const version = async () => {
    const exists = await client.query(`SELECT to_regclass($1) AS t`, [`${S}.schema_version`]);
    if (!exists.rows[0].t) return 0;
    const { rows } = await client.query(`SELECT max(version) AS v FROM ${S}.schema_version`);
    return Number(rows[0].v ?? 0);
  };
  const seen = await version();
  if (seen > PG_SCHEMA_VERSION) throw newerSchema(target, schema, seen);
  if (seen === PG_SCHEMA_VERSION) return;
  await client.query('BEGIN');
  try {
    await client.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`steward-migrate:${schema}`]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${S}`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${S}.schema_version (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
    const from = await version();
    if (from > PG_SCHEMA_VERSION) throw newerSchema(target, schema, from);
    for (let v = from; v < PG_SCHEMA_VERSION; v++) {
      await client.query(migrations[v]!(S, channel));
      await client.query(`INSERT INTO ${S}.schema_version (version) VALUES ($1)`, [v + 1]);
    }
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    if ((error as { code?: string }).code === '42501') {
      throw new UserError(
        `The PostgreSQL role at ${target} may not create Steward's tables (schema "${schema}"): ${(error as Error).message}. ` +
          `Run Steward once with a role that has CREATE on the database (it creates and migrates the schema), or GRANT CREATE ON DATABASE to this role.`,
        { cause: error },
      );
    }
    throw error;
  }
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
