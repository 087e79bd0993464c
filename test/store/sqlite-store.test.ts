import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { SnapshotError, StoreError, UserError } from '../../src/core/errors.js';
import { SCHEMA_VERSION, SqliteStore, defaultDbPath, durabilityFromEnv } from '../../src/store/sqlite-store.js';
import { describeSessionStore, entry } from './session-store.spec.js';

/** A fresh directory under the OS temp dir per test; removed by the returned function. */
function tempDir(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'steward-sqlite-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

describeSessionStore('SqliteStore', async () => {
  const { dir, remove } = tempDir();
  const store = new SqliteStore(join(dir, 'steward.db'));
  return {
    store,
    cleanup: async () => {
      await store.close();
      remove();
    },
  };
});

describe('SqliteStore on disk', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  function dbFile(): string {
    const { dir, remove } = tempDir();
    cleanups.push(remove);
    // A nested path also checks that missing parent directories are created.
    return join(dir, 'nested', 'dir', 'steward.db');
  }
  function open(path: string): SqliteStore {
    const store = new SqliteStore(path);
    cleanups.push(() => store.close());
    return store;
  }
  const created = { kind: 'created', type: 'session.created', payload: {}, state: 'idle' } as const;

  it('keeps sessions and journals across close and reopen', async () => {
    const path = dbFile();
    const first = open(path);
    await first.create({ id: 's1', packageId: 'pkg', snapshot: { step: 0 }, entry: created });
    await first.append({ id: 's1', expectedRevision: 1, entries: [entry('a', 'working', { n: 1 })], snapshot: { step: 1 } });
    await first.close();

    const second = open(path);
    expect(await second.load('s1')).toMatchObject({ id: 's1', packageId: 'pkg', revision: 2, snapshot: { step: 1 } });
    expect((await second.journal('s1')).map((e) => [e.seq, e.type, e.payload])).toEqual([
      [1, 'session.created', {}],
      [2, 'a', { n: 1 }],
    ]);
    expect(await second.append({ id: 's1', expectedRevision: 2, entries: [entry('b', 'done')], snapshot: { step: 2 } })).toBe(3);
  });

  it('migrates a v5 file to the outbox and to owners and participants: its sessions have none; a read-only reader of a v5 file lists none to a caller', async () => {
    const path = dbFile();
    const store = open(path);
    await store.create({ id: 'old', packageId: null, snapshot: { step: 0 }, entry: created });
    await store.close();
    // Back to the v5 shape, as a file written by the previous Steward.
    const raw = new Database(path);
    raw.exec(`DROP INDEX sessions_of_owner; DROP TABLE session_participants; ALTER TABLE sessions DROP COLUMN owner; DROP TABLE webhook_outbox;`);
    raw.pragma('user_version = 5');
    raw.close();

    const reader = new SqliteStore(path, { readOnly: true });
    cleanups.push(() => reader.close());
    expect(await reader.load('old')).toMatchObject({ id: 'old', owner: null, participants: [] });
    expect((await reader.list()).sessions).toMatchObject([{ id: 'old', owner: null, participants: [] }]);
    expect(await reader.list({ visibleTo: { owner: 'alice', participants: ['alice'] } })).toEqual({ sessions: [], next: null });
    await reader.close();

    const migrated = open(path);
    expect(await migrated.load('old')).toMatchObject({ owner: null, participants: [] });
    await migrated.create({ id: 'new', packageId: null, snapshot: {}, entry: created, owner: 'alice', participants: ['group:ops'] });
    expect((await migrated.list({ visibleTo: { owner: 'bob', participants: ['bob', 'group:ops'] } })).sessions.map((s) => s.id)).toEqual(['new']);
    const check = new Database(path, { readonly: true });
    cleanups.push(() => {
      check.close();
    });
    expect(check.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    expect(await migrated.outbox.counts()).toEqual({ pending: 0, dead: 0 });
  });

  it('migrates a v7 file to deadlines: its sessions have none until a write sets one; the scan reads the partial index; a read-only reader of a v7 file finds none due', async () => {
    const path = dbFile();
    const store = open(path);
    await store.create({ id: 'old', packageId: null, snapshot: { step: 0 }, entry: created });
    await store.close();
    // Back to the v7 shape, as a file written by the previous Steward.
    const raw = new Database(path);
    raw.exec(
      `DROP INDEX sessions_due; ALTER TABLE sessions DROP COLUMN due_at; ALTER TABLE sessions DROP COLUMN due_wait; ALTER TABLE sessions DROP COLUMN due_level;`,
    );
    raw.pragma('user_version = 7');
    raw.close();

    const reader = new SqliteStore(path, { readOnly: true });
    cleanups.push(() => reader.close());
    expect(await reader.load('old')).toMatchObject({ id: 'old', deadline: null });
    expect(await reader.dueDeadlines('2999-01-01T00:00:00.000Z', 10)).toEqual([]);
    await reader.close();

    const migrated = open(path);
    expect(await migrated.load('old')).toMatchObject({ revision: 1, deadline: null });
    const deadline = { wait: 1, level: 0, dueAt: '2031-01-01T00:00:00.000Z' };
    await migrated.append({ id: 'old', expectedRevision: 1, entries: [entry('wait', 'waiting_user.review')], snapshot: {}, deadline });
    expect(await migrated.dueDeadlines('2031-01-01T00:00:00.000Z', 10)).toEqual([{ sessionId: 'old', deadline }]);
    const check = new Database(path, { readonly: true });
    cleanups.push(() => {
      check.close();
    });
    expect(check.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    // The scan's query as SqliteStore.dueDeadlines sends it.
    const plan = check
      .prepare<[string, number], { detail: string }>(
        `EXPLAIN QUERY PLAN SELECT id, due_at, due_wait, due_level FROM sessions WHERE due_at IS NOT NULL AND due_at <= ? ORDER BY due_at, id LIMIT ?`,
      )
      .all('2031-01-01T00:00:00.000Z', 10);
    // One step, by the index and in its order: no table scan, no sort of every session with a deadline.
    expect(plan.map((step) => step.detail)).toEqual([expect.stringMatching(/^SEARCH sessions USING (COVERING )?INDEX sessions_due \(due_at/)]);
  });

  it('refuses a row whose deadline is corrupt (SnapshotError naming the session and the fix), on load and in the scan', async () => {
    const path = dbFile();
    const store = open(path);
    await store.create({ id: 'bad', packageId: null, snapshot: {}, entry: created, deadline: { wait: 1, level: 0, dueAt: '2031-01-01T00:00:00.000Z' } });
    const raw = new Database(path);
    cleanups.push(() => {
      raw.close();
    });
    raw.exec(`UPDATE sessions SET due_level = NULL WHERE id = 'bad'`);
    await expect(store.load('bad')).rejects.toThrow(SnapshotError);
    await expect(store.load('bad')).rejects.toThrow(/stored deadline of session "bad" is corrupt \(level .*\).*clear its due_at/);
    await expect(store.dueDeadlines('2031-01-01T00:00:00.000Z', 10)).rejects.toThrow(SnapshotError);
  });

  it('uses WAL, a busy timeout and the current schema version', () => {
    const path = dbFile();
    open(path);
    const raw = new Database(path);
    cleanups.push(() => {
      raw.close();
    });
    expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(raw.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
  });

  it('fsyncs what is acknowledged (the WAL, off the event loop), also on a reopened file; defers only the writes marked durable: false', async () => {
    const path = dbFile();
    const first = open(path);
    await first.create({ id: 's1', packageId: null, snapshot: { step: 0 }, entry: created });
    expect(first.walFlushes).toBe(1);
    await first.close();
    // Commits run at NORMAL (no fsync inside the commit); a durable one then waits for an
    // fsync of the WAL file. better-sqlite3 opens a WAL file at NORMAL already, the store
    // sets it anyway.
    const store = open(path);
    expect(await store.append({ id: 's1', expectedRevision: 1, entries: [entry('a', 'waiting')], snapshot: { step: 1 } })).toBe(2);
    expect(store.synchronous()).toBe(1);
    expect(store.walFlushes).toBe(1);
    expect(await store.append({ id: 's1', expectedRevision: 2, entries: [entry('b', 'running')], snapshot: { step: 2 }, durable: false })).toBe(3);
    expect(store.walFlushes).toBe(1); // survives a process crash, not a power loss
    await store.create({ id: 's2', packageId: null, snapshot: { step: 0 }, entry: created });
    expect(store.walFlushes).toBe(2);

    const everyEvent = new SqliteStore(path, { durability: 'every-event' });
    cleanups.push(() => everyEvent.close());
    expect(await everyEvent.append({ id: 's1', expectedRevision: 3, entries: [entry('c', 'running')], snapshot: { step: 3 }, durable: false })).toBe(4);
    expect(everyEvent.walFlushes).toBe(1);
    // 'process': nothing flushed by the store, not even what ends a send().
    const processOnly = new SqliteStore(path, { durability: 'process' });
    cleanups.push(() => processOnly.close());
    expect(await processOnly.append({ id: 's1', expectedRevision: 4, entries: [entry('d', 'waiting')], snapshot: { step: 4 } })).toBe(5);
    await processOnly.create({ id: 's3', packageId: null, snapshot: { step: 0 }, entry: created });
    expect(processOnly.walFlushes).toBe(0);
    expect(processOnly.synchronous()).toBe(1);
    expect(() => new SqliteStore(path, { durability: 'sometimes' as never })).toThrow(
      /durability "sometimes" is unknown: use "acknowledged" or "every-event" or "process"/,
    );
  });

  it('lets concurrent durable writes share an fsync, and resolves none before an fsync that began after its commit', async () => {
    const store = open(dbFile());
    const ids = Array.from({ length: 30 }, (_, i) => `g${i}`);
    await Promise.all(ids.map((id) => store.create({ id, packageId: null, snapshot: { step: 0 }, entry: created })));
    const before = store.walFlushes;
    // All thirty commit at once; the first flush may have begun before the later commits, so at most two.
    await Promise.all(ids.map((id) => store.append({ id, expectedRevision: 1, entries: [entry('a', 'waiting')], snapshot: { step: 1 } })));
    expect(store.walFlushes - before).toBeGreaterThanOrEqual(1);
    expect(store.walFlushes - before).toBeLessThanOrEqual(2);
    // One after another: each waits for its own.
    for (const id of ids.slice(0, 3)) await store.append({ id, expectedRevision: 2, entries: [entry('b', 'waiting')], snapshot: { step: 2 } });
    expect(store.walFlushes - before).toBeLessThanOrEqual(5);
    expect(store.walFlushes - before).toBeGreaterThanOrEqual(4);
  });

  it('reads STEWARD_DURABILITY, naming the values it takes', () => {
    expect(durabilityFromEnv({})).toBe('acknowledged');
    expect(durabilityFromEnv({ STEWARD_DURABILITY: '' })).toBe('acknowledged');
    expect(durabilityFromEnv({ STEWARD_DURABILITY: 'every-event' })).toBe('every-event');
    expect(durabilityFromEnv({ STEWARD_DURABILITY: 'process' })).toBe('process');
    expect(() => durabilityFromEnv({ STEWARD_DURABILITY: 'always' })).toThrow(/STEWARD_DURABILITY is "always".*"acknowledged" or "every-event" or "process"/);
  });

  it('migrates a v2 file: last_seq from the journal, the updated_at index replaced by the paging one; read-only connections still read v2', async () => {
    const path = dbFile();
    const store = open(path);
    await store.create({ id: 's1', packageId: null, snapshot: { step: 0 }, entry: created });
    await store.append({ id: 's1', expectedRevision: 1, entries: [entry('a', 'x'), entry('b', 'y')], snapshot: { step: 1 } });
    await store.create({ id: 's2', packageId: null, snapshot: { step: 0 }, entry: created });
    await store.close();
    // Back to the v2 shape, as a file written by the previous Steward.
    const raw = new Database(path);
    raw.exec(`ALTER TABLE sessions DROP COLUMN last_seq; DROP INDEX sessions_by_position; CREATE INDEX sessions_by_update ON sessions(updated_at DESC);`);
    raw.pragma('user_version = 2');
    raw.close();

    const reader = new SqliteStore(path, { readOnly: true });
    cleanups.push(() => reader.close());
    expect((await reader.list()).sessions.map((s) => s.id).sort()).toEqual(['s1', 's2']);
    expect((await reader.journal('s1')).map((e) => e.seq)).toEqual([1, 2, 3]);
    await reader.close();

    const migrated = open(path);
    expect(await migrated.append({ id: 's1', expectedRevision: 2, entries: [entry('c', 'z')], snapshot: { step: 2 } })).toBe(3);
    expect((await migrated.journal('s1')).map((e) => [e.seq, e.type])).toEqual([
      [1, 'session.created'],
      [2, 'a'],
      [3, 'b'],
      [4, 'c'],
    ]);
    expect(await migrated.append({ id: 's2', expectedRevision: 1, entries: [entry('d', 'z')], snapshot: { step: 1 } })).toBe(2);
    expect((await migrated.journal('s2')).map((e) => e.seq)).toEqual([1, 2]);
    const check = new Database(path, { readonly: true });
    cleanups.push(() => {
      check.close();
    });
    expect(check.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    // v3 dropped the index on updated_at; v4 added the one list() pages on.
    expect(check.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'sessions_by_%'`).all()).toEqual([
      { name: 'sessions_by_position' },
    ]);
    expect(check.prepare(`SELECT id, last_seq FROM sessions ORDER BY id`).all()).toEqual([
      { id: 's1', last_seq: 4 },
      { id: 's2', last_seq: 2 },
    ]);
  });

  it('keeps writing after an older Steward (schema v2, open before the migration) wrote entries without last_seq', async () => {
    const path = dbFile();
    const store = open(path);
    await store.create({ id: 's1', packageId: null, snapshot: { step: 0 }, entry: created });
    // What a v2 process does on this file: a journal row, the revision bumped, last_seq untouched;
    // and a session it creates has last_seq 0 (the column's default).
    const old = new Database(path);
    cleanups.push(() => {
      old.close();
    });
    old.prepare(`INSERT INTO journal (session_id, seq, at, kind, type, payload, state) VALUES ('s1', 2, 'now', 'event', 'old', '{}', 'x')`).run();
    old.prepare(`UPDATE sessions SET revision = 2 WHERE id = 's1'`).run();
    old
      .prepare(`INSERT INTO sessions (id, package_id, revision, snapshot, state, created_at, updated_at) VALUES ('s2', NULL, 1, '{}', 'x', 'now', 'now')`)
      .run();
    old.prepare(`INSERT INTO journal (session_id, seq, at, kind, type, payload, state) VALUES ('s2', 1, 'now', 'event', 'session.created', '{}', 'x')`).run();
    expect(await store.append({ id: 's1', expectedRevision: 2, entries: [entry('a', 'y')], snapshot: { step: 2 } })).toBe(3);
    expect(await store.append({ id: 's2', expectedRevision: 1, entries: [entry('b', 'y')], snapshot: { step: 1 } })).toBe(2);
    expect((await store.journal('s1')).map((e) => [e.seq, e.type])).toEqual([
      [1, 'session.created'],
      [2, 'old'],
      [3, 'a'],
    ]);
    expect((await store.journal('s2')).map((e) => [e.seq, e.type])).toEqual([
      [1, 'session.created'],
      [2, 'b'],
    ]);
  });

  it('reports a corrupt snapshot as SnapshotError naming the session, and still loads the others', async () => {
    const path = dbFile();
    const store = open(path);
    await store.create({ id: 'broken', packageId: null, snapshot: { ok: true }, entry: created });
    await store.create({ id: 'healthy', packageId: null, snapshot: { ok: true }, entry: created });
    const raw = new Database(path);
    raw.prepare(`UPDATE sessions SET snapshot = '{"ok": tru' WHERE id = 'broken'`).run();
    raw.close();

    const load = store.load('broken');
    await expect(load).rejects.toThrow(SnapshotError);
    await expect(load).rejects.toThrow(/"broken"/);
    expect(await store.load('healthy')).toMatchObject({ snapshot: { ok: true } });
    expect((await store.list()).sessions.map((s) => s.id).sort()).toEqual(['broken', 'healthy']);
  });

  it('reports a corrupt journal payload as SnapshotError naming session and seq', async () => {
    const path = dbFile();
    const store = open(path);
    await store.create({ id: 's1', packageId: null, snapshot: {}, entry: created });
    await store.append({ id: 's1', expectedRevision: 1, entries: [entry('a', 'x'), entry('b', 'x')], snapshot: {} });
    await store.create({ id: 's2', packageId: null, snapshot: {}, entry: created });
    const raw = new Database(path);
    raw.prepare(`UPDATE journal SET payload = 'not json' WHERE session_id = 's1' AND seq = 3`).run();
    raw.close();

    await expect(store.journal('s1')).rejects.toThrow(/Journal entry 3 of session "s1"/);
    await expect(store.journal('s1')).rejects.toThrow(SnapshotError);
    // Entries before the bad one are still readable by paging, and other sessions are untouched.
    expect((await store.journal('s1', { limit: 2 })).map((e) => e.seq)).toEqual([1, 2]);
    expect(await store.journal('s2')).toHaveLength(1);
  });

  it('refuses a file from a newer schema version with a UserError naming the file', () => {
    const path = dbFile();
    open(path);
    const raw = new Database(path);
    raw.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    raw.close();

    expect(() => new SqliteStore(path)).toThrow(UserError);
    expect(() => new SqliteStore(path)).toThrow(path);
  });

  it('refuses a file that is not SQLite with a StoreError (store_corrupt) naming the file', () => {
    const { dir, remove } = tempDir();
    cleanups.push(remove);
    const path = join(dir, 'notes.txt');
    writeFileSync(path, 'these are not the pages you are looking for '.repeat(50));
    expect(() => new SqliteStore(path)).toThrow(StoreError);
    expect(() => new SqliteStore(path)).toThrow(/store|SQLite/);
    expect(() => new SqliteStore(path)).toThrow(path);
  });

  it('rejects a snapshot that JSON cannot represent, before writing anything', async () => {
    const store = open(dbFile());
    await store.create({ id: 's1', packageId: null, snapshot: {}, entry: created });
    await expect(store.append({ id: 's1', expectedRevision: 1, entries: [entry('a', 'x', { n: 1n })], snapshot: {} })).rejects.toThrow(UserError);
    await expect(store.append({ id: 's1', expectedRevision: 1, entries: [], snapshot: undefined })).rejects.toThrow(UserError);
    expect(await store.load('s1')).toMatchObject({ revision: 1 });
    expect(await store.journal('s1')).toHaveLength(1);
  });
});

describe('defaultDbPath', () => {
  it('uses STEWARD_DB when set, resolved against the working directory', () => {
    expect(defaultDbPath({ STEWARD_DB: '/data/s.db' }, '/home/me')).toBe('/data/s.db');
    expect(defaultDbPath({ STEWARD_DB: 'db/s.db' }, '/home/me')).toBe('/home/me/db/s.db');
  });

  it('falls back to .steward/steward.db under the working directory', () => {
    expect(defaultDbPath({}, '/home/me')).toBe('/home/me/.steward/steward.db');
    expect(defaultDbPath({ STEWARD_DB: '' }, '/home/me')).toBe('/home/me/.steward/steward.db');
  });
});
