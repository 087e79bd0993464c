/**
 * A write that meets another connection's write lock waits without blocking the event loop:
 * timers, other requests and reads of this process go on meanwhile, `busy` says so, and
 * the write lands once the lock is released — or fails with store_locked after the busy
 * timeout, having written nothing. (The holder is a second connection in this process: with
 * the old synchronous wait it could never let go while the append waited.)
 */
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { StoreError } from '../../src/core/errors.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { useTempDir } from '../support/temp.js';
import { entry } from './session-store.spec.js';

const tmp = useTempDir('steward-lock-wait-');
const created = { kind: 'created', type: 'session.created', payload: {}, state: 'idle' } as const;
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

let files = 0;
function open(options: { busyTimeoutMs?: number } = {}): { store: SqliteStore; path: string } {
  const path = tmp.path(`lock-${++files}.db`);
  const store = new SqliteStore(path, options);
  cleanups.push(() => store.close());
  return { store, path };
}

/** Another connection's open write transaction (BEGIN IMMEDIATE), as a CLI writing would hold. */
function holdWriteLock(path: string): { release: () => void } {
  const holder = new Database(path);
  holder.exec('BEGIN IMMEDIATE');
  cleanups.push(() => holder.close());
  return { release: () => holder.exec('ROLLBACK') };
}

/** Resolves on the next turn of the event loop, after timers and I/O: only if nothing blocks it. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('SqliteStore waiting for a lock', () => {
  it('a locked append lets the event loop run and reads answer; it lands once the lock is released', async () => {
    const { store, path } = open();
    await store.create({ id: 's1', packageId: null, snapshot: { step: 0 }, entry: created });
    const lock = holdWriteLock(path);

    const order: string[] = [];
    const appending = store.append({ id: 's1', expectedRevision: 1, entries: [entry('a', 'working')], snapshot: { step: 1 } });
    void appending.then(
      () => order.push('append settled'),
      () => order.push('append failed'),
    );
    setImmediate(() => order.push('event loop ran'));
    await nextTurn();
    expect(order).toEqual(['event loop ran']);
    expect(store.busy).toBe(true);

    // Reads need no write lock (WAL): they answer while the write waits, and see the saved state.
    expect(await store.load('s1')).toMatchObject({ revision: 1, snapshot: { step: 0 } });
    expect((await store.journal('s1')).map((e) => e.type)).toEqual(['session.created']);
    expect((await store.list()).sessions.map((s) => s.id)).toEqual(['s1']);
    expect(order).toEqual(['event loop ran']);

    lock.release();
    expect(await appending).toBe(2);
    expect(order).toEqual(['event loop ran', 'append settled']);
    expect(store.busy).toBe(false);
    expect(await store.load('s1')).toMatchObject({ revision: 2, snapshot: { step: 1 } });
    expect((await store.journal('s1')).map((e) => [e.seq, e.type])).toEqual([
      [1, 'session.created'],
      [2, 'a'],
    ]);
  });

  it('a locked create waits the same way and lands once the lock is released', async () => {
    const { store, path } = open();
    await store.create({ id: 'first', packageId: null, snapshot: {}, entry: created });
    const lock = holdWriteLock(path);
    let settled = false;
    const creating = store.create({ id: 's2', packageId: 'pkg', snapshot: { step: 0 }, entry: created }).finally(() => (settled = true));
    await nextTurn();
    expect(settled).toBe(false);
    expect(store.busy).toBe(true);
    expect(await store.load('s2')).toBeUndefined();
    lock.release();
    expect(await creating).toMatchObject({ id: 's2', revision: 1 });
    expect((await store.journal('s2')).map((e) => e.seq)).toEqual([1]);
  });

  it('a lock held past the busy timeout: store_locked naming the wait, nothing written, the next write goes on', async () => {
    const { store, path } = open({ busyTimeoutMs: 300 });
    await store.create({ id: 's1', packageId: null, snapshot: { step: 0 }, entry: created });
    const lock = holdWriteLock(path);

    const order: string[] = [];
    const late = store.append({ id: 's1', expectedRevision: 1, entries: [entry('a', 'working')], snapshot: { step: 1 } });
    void late.catch(() => order.push('append failed'));
    setImmediate(() => order.push('event loop ran'));
    const failure = await late.then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(order).toEqual(['event loop ran', 'append failed']);
    expect(failure).toBeInstanceOf(StoreError);
    expect(failure).toMatchObject({ code: 'store_locked', message: expect.stringContaining('locked by another process (waited 300 ms)') });
    expect(store.busy).toBe(false);

    lock.release();
    expect(await store.load('s1')).toMatchObject({ revision: 1, snapshot: { step: 0 } });
    expect(await store.append({ id: 's1', expectedRevision: 1, entries: [entry('b', 'working')], snapshot: { step: 1 } })).toBe(2);
    expect((await store.journal('s1')).map((e) => [e.seq, e.type])).toEqual([
      [1, 'session.created'],
      [2, 'b'],
    ]);
  });

  it('several writes of this process waiting together all land, each once', async () => {
    const { store, path } = open();
    await store.create({ id: 'a', packageId: null, snapshot: {}, entry: created });
    await store.create({ id: 'b', packageId: null, snapshot: {}, entry: created });
    const lock = holdWriteLock(path);
    const deferred = store.append({ id: 'a', expectedRevision: 1, entries: [entry('x', 'running')], snapshot: {}, durable: false });
    const durable = store.append({ id: 'b', expectedRevision: 1, entries: [entry('y', 'waiting')], snapshot: {} });
    await nextTurn();
    lock.release();
    expect(await Promise.all([deferred, durable])).toEqual([2, 2]);
    expect((await store.journal('a')).map((e) => e.type)).toEqual(['session.created', 'x']);
    expect((await store.journal('b')).map((e) => e.type)).toEqual(['session.created', 'y']);
  });
});
