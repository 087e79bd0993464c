/**
 * PostgresStore on a real server (test/support/postgres.ts: a throwaway cluster, or
 * STEWARD_TEST_PG): the shared SessionStore contract, then what only PostgreSQL has —
 * several pools on one database, LISTEN/NOTIFY watches, migrations, and connection errors.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConflictError, StoreUnavailableError, UserError } from '../../src/core/errors.js';
import { LiveHub } from '../../src/inspect/live-hub.js';
import { DemoModel } from '../../src/models/demo-model.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import { DEFAULT_PG_POOL_SIZE, PG_SCHEMA_VERSION, PostgresStore, poolSizeFromEnv, redactUrl } from '../../src/store/postgres-store.js';
import { preparedFromEnv } from '../../src/store/postgres-prepared.js';
import type { SessionChange } from '../../src/store/session-store.js';
import { holdLock, postgresUnavailable, startPostgres, TEST_PASSWORD } from '../support/postgres.js';
import { usePostgres } from '../support/use-postgres.js';
import { closedPort } from '../support/temp.js';
import { describeSessionStore, entry } from './session-store.spec.js';

const server = usePostgres();
let url = '';
beforeAll(async () => {
  if (postgresUnavailable) return;
  url = await server.createDatabase();
}, 60_000);

/** Each test gets its own PostgreSQL schema, so tests never see each other's sessions. */
const freshSchema = () => `t_${randomBytes(5).toString('hex')}`;
const created = { kind: 'created', type: 'session.created', payload: {}, state: 'idle' } as const;

describe.skipIf(postgresUnavailable !== null)('PostgreSQL', () => {
  describeSessionStore('PostgresStore', async () => {
    const store = new PostgresStore(url, { schema: freshSchema() });
    const admin = new pg.Pool({ connectionString: url, max: 1 });
    return {
      store,
      cleanup: async () => {
        await store.close();
        await admin.end();
      },
      stamp: async (id, at) => {
        await admin.query(`UPDATE "${store.schema}".sessions SET updated_at = $2::timestamptz WHERE id = $1`, [id, at]);
      },
    };
  });

  describe('PostgresStore on a shared database', () => {
    const open: PostgresStore[] = [];
    afterAll(async () => {
      await Promise.all(open.map((s) => s.close()));
    });
    /** Another store instance with its own pool: as another process or server would be. */
    const connect = (schema: string) => {
      const store = new PostgresStore(url, { schema });
      open.push(store);
      return store;
    };

    it('pages sessions of one millisecond in microsecond order: the cursor keeps what the database compares', async () => {
      const store = connect(freshSchema());
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      try {
        for (const [id, at] of [
          ['x', '.123100'],
          ['y', '.123900'],
          ['z', '.123500'],
          ['w', '.124000'],
        ] as const) {
          await store.create({ id, packageId: null, snapshot: {}, entry: created });
          await admin.query(`UPDATE "${store.schema}".sessions SET updated_at = $2::timestamptz WHERE id = $1`, [id, `2031-05-06T07:08:09${at}Z`]);
        }
      } finally {
        await admin.end();
      }
      const ids: string[] = [];
      let after: string | null = null;
      do {
        const page: Awaited<ReturnType<PostgresStore['list']>> = await store.list({ limit: 1, after });
        ids.push(...page.sessions.map((s) => s.id));
        after = page.next;
      } while (after !== null && ids.length < 10);
      expect(ids).toEqual(['w', 'y', 'z', 'x']);
    });

    it('a write marked durable: false commits without waiting for its WAL flush; the next durable one flushes it too; nothing leaks into the pool', async () => {
      // A server of its own: the test changes a server-wide setting and reads the server-wide
      // WAL positions, which another file's writes on the run's shared server would move.
      const own = await startPostgres();
      const url = await own.createDatabase();
      const admin = new pg.Pool({ connectionString: url, max: 1 });
      const pool = new pg.Pool({ connectionString: url, max: 1 });
      const store = new PostgresStore(pool, { schema: freshSchema() });
      const everyEvent = new PostgresStore(url, { schema: store.schema, durability: 'every-event' });
      const lsn = async () =>
        (
          await admin.query<{ flushed: string; inserted: string; behind: boolean }>(
            `SELECT pg_current_wal_flush_lsn()::text AS flushed, pg_current_wal_insert_lsn()::text AS inserted, pg_current_wal_flush_lsn() < pg_current_wal_insert_lsn() AS behind`,
          )
        ).rows[0]!;
      // The WAL writer would flush an asynchronous commit within wal_writer_delay (200 ms): slow it down.
      await admin.query(`ALTER SYSTEM SET wal_writer_delay = '10s'`);
      await admin.query(`SELECT pg_reload_conf()`);
      try {
        await store.create({ id: 's', packageId: null, snapshot: { n: 0 }, entry: created });
        // Committed, visible, not yet on disk. The WAL writer may still wake for a commit (it
        // is signalled when a WAL page fills, and the reload may land late), so a few deferred
        // writes get the chance to show it; one behind is the proof.
        let revision = 1;
        let afterDeferred = await lsn();
        const loops: string[] = [];
        for (let i = 0; i < 5; i++) {
          loops.push(`loop${i}`);
          expect(
            await store.append({ id: 's', expectedRevision: revision, entries: [entry(`loop${i}`, 'running')], snapshot: { n: revision }, durable: false }),
          ).toBe(++revision);
          afterDeferred = await lsn();
          if (afterDeferred.behind) break;
        }
        expect(afterDeferred.behind).toBe(true);
        expect((await pool.query<{ synchronous_commit: string }>('SHOW synchronous_commit')).rows[0]!.synchronous_commit).toBe('on');
        expect((await store.journal('s')).map((e) => e.type)).toEqual(['session.created', ...loops]);
        expect(await store.append({ id: 's', expectedRevision: revision, entries: [entry('wait', 'waiting')], snapshot: { n: revision } })).toBe(++revision);
        const afterDurable = await lsn();
        expect(await admin.query(`SELECT $1::pg_lsn >= $2::pg_lsn AS ok`, [afterDurable.flushed, afterDeferred.inserted]).then((r) => r.rows[0].ok)).toBe(true);
        // every-event ignores durable: false.
        const before = await lsn();
        expect(
          await everyEvent.append({ id: 's', expectedRevision: revision, entries: [entry('loop2', 'running')], snapshot: { n: revision }, durable: false }),
        ).toBe(++revision);
        expect(await admin.query(`SELECT $1::pg_lsn > $2::pg_lsn AS ok`, [(await lsn()).flushed, before.inserted]).then((r) => r.rows[0].ok)).toBe(true);
      } finally {
        await admin.query(`ALTER SYSTEM RESET wal_writer_delay`);
        await admin.query(`SELECT pg_reload_conf()`);
        await store.close();
        await everyEvent.close();
        await pool.end();
        await admin.end();
        await own.stop();
      }
    });

    it('two pools racing on one session: exactly one write wins, the others get ConflictError, seq stays gapless', async () => {
      const schema = freshSchema();
      const stores = Array.from({ length: 4 }, () => connect(schema));
      await stores[0]!.create({ id: 'race', packageId: null, snapshot: { n: 0 }, entry: created });
      for (let round = 1; round <= 5; round++) {
        const results = await Promise.allSettled(
          stores.map((store, i) =>
            store.append({ id: 'race', expectedRevision: round, entries: [entry(`w${i}`, 'x'), entry(`w${i}b`, 'y')], snapshot: { n: round, by: i } }),
          ),
        );
        const won = results.filter((r) => r.status === 'fulfilled');
        expect(won).toHaveLength(1);
        for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(ConflictError);
      }
      const journal = await stores[1]!.journal('race');
      expect(journal.map((e) => e.seq)).toEqual(Array.from({ length: 11 }, (_, i) => i + 1));
      // Each winner's two entries are adjacent: no interleaving of two writers.
      for (let i = 1; i < journal.length; i += 2) expect(journal[i + 1]!.type).toBe(`${journal[i]!.type}b`);
      expect((await stores[2]!.load('race'))?.revision).toBe(6);
    });

    it('a watcher on one pool sees a write made through another pool at once (LISTEN/NOTIFY, no polling)', async () => {
      const schema = freshSchema();
      const writer = connect(schema);
      const reader = connect(schema);
      await writer.create({ id: 'w1', packageId: null, snapshot: {}, entry: created });

      const all: SessionChange[] = [];
      const onlyW2: SessionChange[] = [];
      const stopAll = await reader.watch((change) => all.push(change));
      const stopW2 = await reader.watch((change) => onlyW2.push(change), { sessionId: 'w2' });

      const next = new Promise<SessionChange>((resolve) => {
        void reader.watch((change) => resolve(change), { sessionId: 'w1' });
      });
      const start = Date.now();
      await writer.append({ id: 'w1', expectedRevision: 1, entries: [entry('a', 'working'), entry('b', 'waiting_user.review')], snapshot: { step: 1 } });
      const change = await next;
      const latencyMs = Date.now() - start;
      expect(change).toEqual({ sessionId: 'w1', revision: 2, lastSeq: 3, state: 'waiting_user.review' });
      // Far below any polling interval the inspector used (250 ms).
      expect(latencyMs).toBeLessThan(200);

      await writer.create({ id: 'w2', packageId: null, snapshot: {}, entry: created });
      await expect.poll(() => onlyW2.length).toBe(1);
      expect(onlyW2[0]).toMatchObject({ sessionId: 'w2', revision: 1, lastSeq: 1, state: 'idle' });
      expect(all.map((c) => `${c.sessionId}@${c.revision}`)).toEqual(['w1@2', 'w2@1']);

      // A refused write (conflict) commits nothing and announces nothing.
      await expect(writer.append({ id: 'w1', expectedRevision: 1, entries: [entry('late', 'x')], snapshot: {} })).rejects.toThrow(ConflictError);
      await stopW2();
      await writer.append({ id: 'w2', expectedRevision: 1, entries: [entry('c', 'done')], snapshot: {} });
      await expect.poll(() => all.length).toBe(3);
      expect(all[2]).toMatchObject({ sessionId: 'w2', revision: 2, state: 'done' });
      expect(onlyW2).toHaveLength(1);
      await stopAll();
    });

    it('a watcher that lost its connection reconnects and re-announces what was written meanwhile', async () => {
      // A database of its own: the connections ended below are only this test's.
      const own = await server.createDatabase();
      const writer = new PostgresStore(own);
      const reader = new PostgresStore(own);
      open.push(writer, reader);
      await writer.create({ id: 'r1', packageId: null, snapshot: {}, entry: created });
      const seen: SessionChange[] = [];
      const errors: unknown[] = [];
      await reader.watch((change) => seen.push(change), { onError: (e) => errors.push(e) });

      // The server ends the listening connection (as a restart or a network cut would).
      const admin = new pg.Client({ connectionString: own });
      await admin.connect();
      try {
        // Every other connection to this database: the listener's and the pools' (a restart).
        await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`);
      } finally {
        await admin.end();
      }
      await expect.poll(() => errors.length).toBeGreaterThan(0);
      // The write comes from another server: a fresh pool (the writer's idle connections were
      // ended too, and a pool may hand one out before it has heard of that).
      const other = new PostgresStore(own);
      open.push(other);
      await other.append({ id: 'r1', expectedRevision: 1, entries: [entry('while-away', 'working')], snapshot: {} });
      await expect.poll(() => seen.some((c) => c.sessionId === 'r1' && c.revision === 2), { timeout: 5000 }).toBe(true);
    });

    it("the inspector's live hub hears another server's write through the store's watch, and never polls", async () => {
      const schema = freshSchema();
      const writer = connect(schema);
      const reader = connect(schema);
      let lists = 0;
      const list = reader.list.bind(reader);
      reader.list = () => {
        lists += 1;
        return list();
      };
      await writer.create({ id: 'h1', packageId: null, snapshot: {}, entry: created });
      const hub = new LiveHub(createRuntime({ model: new DemoModel(), store: reader }), reader, null);
      const http: Server = createServer((_req, res) => hub.attach(res, 'h1'));
      await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
      try {
        const { port } = http.address() as { port: number };
        const stream = await fetch(`http://127.0.0.1:${port}/`);
        const reader2 = stream.body!.getReader();
        let text = '';
        const reading = (async () => {
          for (;;) {
            const { value, done } = await reader2.read();
            if (done) return;
            text += new TextDecoder().decode(value);
          }
        })();
        await expect.poll(() => text).toContain('event: hello');
        await new Promise((r) => setTimeout(r, 100));
        // Idle: a polling hub would have listed the sessions every 250 ms by now.
        const idleLists = lists;
        await new Promise((r) => setTimeout(r, 700));
        expect(lists).toBe(idleLists);

        await writer.append({ id: 'h1', expectedRevision: 1, entries: [entry('go', 'working')], snapshot: {} });
        await expect.poll(() => text, { timeout: 2000 }).toContain('event: session\ndata: {"id":"h1","revision":2}');
        await reader2.cancel();
        await reading.catch(() => {});
      } finally {
        hub.close();
        await new Promise<void>((resolve) => http.close(() => resolve()));
      }
    });

    it('a forged or malformed notification on the channel is reported and ignored, never crashes the process', async () => {
      const schema = freshSchema();
      const writer = connect(schema);
      const reader = connect(schema);
      await writer.create({ id: 'f1', packageId: null, snapshot: {}, entry: created });
      const seen: SessionChange[] = [];
      const errors: unknown[] = [];
      await reader.watch((change) => seen.push(change), { onError: (e) => errors.push(e) });
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      try {
        for (const payload of ['not json', '{"sessionId":1}', 'null', '{"sessionId":"f1","revision":9,"lastSeq":9,"state":"x"}']) {
          await admin.query('SELECT pg_notify($1, $2)', [`steward_changes_${schema}`, payload]);
        }
      } finally {
        await admin.end();
      }
      await expect.poll(() => errors.length).toBe(4);
      expect(String(errors[0])).toMatch(/Ignored a malformed notification/);
      await writer.append({ id: 'f1', expectedRevision: 1, entries: [entry('real', 'working')], snapshot: {} });
      await expect.poll(() => seen.map((c) => c.revision)).toEqual([2]);
    });

    it('two stores opening a fresh schema at once migrate it once, to the current version', async () => {
      const schema = freshSchema();
      const stores = Array.from({ length: 3 }, () => connect(schema));
      await Promise.all(stores.map((s) => s.ready()));
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const { rows } = await client.query(`SELECT version FROM "${schema}".schema_version ORDER BY version`);
        expect(rows.map((r) => r.version)).toEqual(Array.from({ length: PG_SCHEMA_VERSION }, (_, i) => i + 1)); // one row per applied step, each once

        // A schema written by a newer Steward is refused with the fix, not misread.
        await client.query(`INSERT INTO "${schema}".schema_version (version) VALUES ($1)`, [PG_SCHEMA_VERSION + 1]);
      } finally {
        await client.end();
      }
      const newer = connect(schema);
      await expect(newer.list()).rejects.toThrow(UserError);
      await expect(newer.list()).rejects.toThrow(
        new RegExp(`schema version ${PG_SCHEMA_VERSION + 1}, but this Steward supports up to ${PG_SCHEMA_VERSION}\\. Upgrade Steward`),
      );
    });

    it('migrates a schema of step 8 to deadlines (sessions already written have none), and the scan reads the partial index in its order', async () => {
      const schema = freshSchema();
      const old = connect(schema);
      await old.create({ id: 'v8', packageId: null, snapshot: { kept: true }, entry: created });
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      try {
        // Back to step 8, as a database written by the previous Steward.
        await admin.query(
          `DROP INDEX "${schema}".sessions_due; ALTER TABLE "${schema}".sessions DROP COLUMN due_at, DROP COLUMN due_wait, DROP COLUMN due_level;
           DELETE FROM "${schema}".schema_version WHERE version >= 9`,
        );
        const upgraded = connect(schema);
        expect(await upgraded.load('v8')).toMatchObject({ snapshot: { kept: true }, deadline: null });
        const deadline = { wait: 1, level: 0, dueAt: '2031-01-01T00:00:00.123Z' };
        await upgraded.append({ id: 'v8', expectedRevision: 1, entries: [entry('wait', 'waiting_user.review')], snapshot: {}, deadline });
        expect(await upgraded.dueDeadlines('2031-01-01T00:00:00.123Z', 10)).toEqual([{ sessionId: 'v8', deadline }]);
        expect(await upgraded.dueDeadlines('2031-01-01T00:00:00.122Z', 10)).toEqual([]);
        const { rows } = await admin.query(`SELECT max(version)::int AS v FROM "${schema}".schema_version`);
        expect(rows[0].v).toBe(PG_SCHEMA_VERSION);

        // The scan's query as PostgresStore.dueDeadlines sends it; a table this small would be read
        // whole, so the planner is told to avoid that if it can: it can by the index, with no sort.
        await admin.query('BEGIN');
        await admin.query('SET LOCAL enable_seqscan = off');
        const plan = await admin.query<{ 'QUERY PLAN': string }>(
          `EXPLAIN SELECT id, due_at, due_wait, due_level FROM "${schema}".sessions
           WHERE due_at IS NOT NULL AND due_at <= '2031-01-01T00:00:00.123Z'::timestamptz ORDER BY due_at, id COLLATE "C" LIMIT 10`,
        );
        await admin.query('ROLLBACK');
        const text = plan.rows.map((r) => r['QUERY PLAN']).join('\n');
        expect(text).toMatch(/Index Scan using sessions_due/);
        expect(text).not.toMatch(/Sort/);
      } finally {
        await admin.end();
      }
    });

    it('keeps the exact JSON it was given (key order, unicode, big numbers as JSON numbers)', async () => {
      const store = connect(freshSchema());
      const snapshot = { z: 1, a: { ü: 'naïve — ✓', nul: 'a\u0000b' }, n: 1.5e300, list: [null, true, ''] };
      await store.create({ id: 'json', packageId: 'pkg', snapshot, entry: created });
      const loaded = await store.load('json');
      expect(loaded?.snapshot).toEqual(snapshot);
      expect(Object.keys(loaded!.snapshot as object)).toEqual(['z', 'a', 'n', 'list']);
    });

    it('uses an app-provided pg.Pool and leaves it open on close', async () => {
      const pool = new pg.Pool({ connectionString: url });
      try {
        const store = new PostgresStore(pool, { schema: freshSchema() });
        expect(store.target).not.toContain(TEST_PASSWORD);
        await store.create({ id: 'p1', packageId: null, snapshot: {}, entry: created });
        await store.close();
        expect((await pool.query('SELECT 1 AS one')).rows[0].one).toBe(1);
      } finally {
        await pool.end();
      }
    });

    it('opens at most poolSize connections: reads queued behind a lock wait on that many, never more', async () => {
      const schema = freshSchema();
      const sized = new PostgresStore(url, { schema, poolSize: 3 });
      open.push(sized);
      await sized.create({ id: 'held', packageId: null, snapshot: {}, entry: created });
      const lock = await holdLock(url, `LOCK TABLE "${schema}".sessions IN ACCESS EXCLUSIVE MODE`);
      // pg_stat_activity is read once per transaction, so the count comes from its own connection.
      const observer = new pg.Client({ connectionString: url });
      await observer.connect();
      try {
        const reads = Array.from({ length: 8 }, () => sized.load('held'));
        const waitingOnLock = async () =>
          Number(
            (await observer.query(`SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`)).rows[0].n,
          );
        await expect.poll(waitingOnLock, { timeout: 5_000 }).toBe(3);
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect(await waitingOnLock()).toBe(3); // the other five wait in the pool, not on the database
        await lock.release();
        expect((await Promise.all(reads)).every((read) => read?.id === 'held')).toBe(true);
      } finally {
        await lock.release();
        await observer.end();
      }
    });

    it('refuses a pool size that is not a whole number of connections, naming the fix; STEWARD_PG_POOL likewise', () => {
      expect(() => new PostgresStore(url, { poolSize: 0 })).toThrow(/poolSize is 0: give a whole number of connections from 3 \(two may be held by LISTEN/);
      expect(() => new PostgresStore(url, { poolSize: 2 })).toThrow(UserError);
      expect(() => new PostgresStore(url, { poolSize: 3.5 })).toThrow(UserError);
      expect(() => poolSizeFromEnv({ STEWARD_PG_POOL: '1' })).toThrow(/from 3 to 1000/);
      expect(poolSizeFromEnv({})).toBeUndefined();
      expect(poolSizeFromEnv({ STEWARD_PG_POOL: '40' })).toBe(40);
      expect(() => poolSizeFromEnv({ STEWARD_PG_POOL: 'many' })).toThrow(/STEWARD_PG_POOL is "many", which is not a pool size\. Set it to a whole number/);
      expect(DEFAULT_PG_POOL_SIZE).toBe(20);
    });

    it('prepares its statements once per connection (named from their text); preparedStatements: false and STEWARD_PG_PREPARED=off send them unnamed', async () => {
      const prepared = async (preparedStatements: boolean) => {
        // An app's pool of one connection: pg_prepared_statements shows that connection's statements.
        const pool = new pg.Pool({ connectionString: url, max: 1 });
        const store = new PostgresStore(pool, { schema: freshSchema(), preparedStatements });
        try {
          await store.create({ id: 'p', packageId: null, snapshot: {}, entry: created });
          let revision = 1;
          for (let i = 0; i < 3; i++)
            revision = await store.append({ id: 'p', expectedRevision: revision, entries: [entry('event', `user_${i}`, 'idle')], snapshot: { i } });
          expect((await store.load('p'))?.revision).toBe(4);
          const { rows } = await pool.query<{ name: string; statement: string }>('SELECT name, statement FROM pg_prepared_statements');
          return rows;
        } finally {
          await store.close();
          await pool.end();
        }
      };
      const named = await prepared(true);
      expect(named.every((row) => /^steward_[0-9a-f]{24}$/.test(row.name))).toBe(true);
      // One statement per text, however often it ran: create, append, load.
      expect(named.filter((row) => row.statement.includes('INSERT INTO') && row.statement.includes('.journal'))).toHaveLength(2);
      expect(named.some((row) => row.statement.includes('FROM') && row.statement.includes('.sessions WHERE id = $1'))).toBe(true);
      expect(await prepared(false)).toEqual([]);
      expect([preparedFromEnv({}), preparedFromEnv({ STEWARD_PG_PREPARED: 'off' }), preparedFromEnv({ STEWARD_PG_PREPARED: 'ON' })]).toEqual([
        true,
        false,
        true,
      ]);
      expect(() => preparedFromEnv({ STEWARD_PG_PREPARED: 'Sometimes' })).toThrow(/STEWARD_PG_PREPARED is "Sometimes": set it to "off" behind a pooler/);
    });

    it('refuses a schema name that is not a plain identifier', () => {
      expect(() => new PostgresStore(url, { schema: 'x"; DROP TABLE y; --' })).toThrow(/schema name .* is not allowed/);
    });
  });

  describe('PostgresStore connection errors', () => {
    const attempt = async (target: string) => {
      const store = new PostgresStore(target);
      try {
        await store.list();
        throw new Error('expected a failure');
      } catch (error) {
        return error as StoreUnavailableError;
      } finally {
        await store.close();
      }
    };

    it('an unreachable server: says so, names host and port, never the password', async () => {
      const port = await closedPort();
      const error = await attempt(`postgres://app:hunter2-secret@127.0.0.1:${port}/steward`);
      expect(error).toBeInstanceOf(StoreUnavailableError);
      expect(error.reason).toBe('unreachable');
      expect(error.code).toBe('store_unavailable');
      expect(error.message).toContain(`Cannot reach the PostgreSQL server at postgres://app@127.0.0.1:${port}/steward`);
      expect(error.message).toMatch(/Start the server, or fix the host and port/);
      expect(error.message).not.toContain('hunter2');
      expect(error.target).not.toContain('hunter2');
    });

    it('bad credentials: says the login was refused and how to fix it, never the password', async () => {
      const wrong = new URL(url);
      wrong.password = 'wrong-password-xyz';
      const error = await attempt(wrong.toString());
      expect(error).toBeInstanceOf(StoreUnavailableError);
      expect(error.reason).toBe('bad_credentials');
      expect(error.message).toMatch(/refused the login: password authentication failed for user "postgres"\. Fix the user name and password/);
      expect(error.message).not.toContain('wrong-password-xyz');
    });

    it('a missing database: names it and says how to create it', async () => {
      const missing = new URL(url);
      missing.pathname = '/no_such_db';
      const error = await attempt(missing.toString());
      expect(error).toBeInstanceOf(StoreUnavailableError);
      expect(error.reason).toBe('missing_database');
      expect(error.message).toMatch(/has no such database: database "no_such_db" does not exist\. Create it/);
      expect(error.message).not.toContain(TEST_PASSWORD);
    });

    it('a role that may not create the schema: says which role and how to fix it', async () => {
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      const role = `reader_${randomBytes(3).toString('hex')}`;
      try {
        await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD 'reader-pw-123'`);
        await admin.query(`REVOKE CREATE ON DATABASE ${new URL(url).pathname.slice(1)} FROM PUBLIC`);
      } finally {
        await admin.end();
      }
      const asReader = new URL(url);
      asReader.username = role;
      asReader.password = 'reader-pw-123';
      const store = new PostgresStore(asReader.toString(), { schema: freshSchema() });
      try {
        await expect(store.list()).rejects.toThrow(UserError);
        await expect(store.list()).rejects.toThrow(/may not create Steward's tables .*GRANT CREATE ON DATABASE/);
        await expect(store.list()).rejects.not.toThrow(/reader-pw-123/);
      } finally {
        await store.close();
      }
    });

    it('redacts passwords (in the user part or a parameter) from URLs it prints', () => {
      expect(redactUrl('postgres://u:p%40ss@h:1/db?password=x&sslmode=require')).toBe('postgres://u@h:1/db?password=&sslmode=require');
      expect(redactUrl('postgres://u:secret@h/db', 'PASSWORD')).toBe('postgres://u:PASSWORD@h/db');
      expect(redactUrl('not a url')).not.toContain('not a url');
    });
  });
});
