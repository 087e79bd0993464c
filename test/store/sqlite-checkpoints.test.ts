/**
 * SqliteStore with `backgroundCheckpoints` (what `steward serve` opens): the whole store
 * contract holds; the store's own commits never checkpoint (its WAL grows while the worker
 * waits); the worker keeps the WAL small under steady writes; `close()` ends the worker's
 * connection too, so SQLite removes the WAL file as it does for a store without one.
 */
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { listAll } from '../../src/store/list-page.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import type { BackgroundCheckpointOptions } from '../../src/store/sqlite-checkpoints.js';
import { describeSessionStore, entry } from './session-store.spec.js';

function tempDb(): { path: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'steward-checkpoints-'));
  return { path: join(dir, 'steward.db'), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

describeSessionStore('SqliteStore with background checkpoints', async () => {
  const { path, remove } = tempDb();
  const store = new SqliteStore(path, { backgroundCheckpoints: { intervalMs: 5 } });
  return {
    store,
    cleanup: async () => {
      await store.close();
      remove();
    },
  };
});

describe('background checkpoints', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** Writes 1,200 sessions with a 10 KB snapshot each (12 MB of pages); the largest WAL file seen meanwhile. */
  async function writeMany(options: BackgroundCheckpointOptions): Promise<{ store: SqliteStore; path: string; largestWal: number }> {
    const { path, remove } = tempDb();
    cleanups.push(remove);
    const store = new SqliteStore(path, { backgroundCheckpoints: options });
    cleanups.push(() => store.close());
    const snapshot = { text: 'x'.repeat(10_000) };
    let largestWal = 0;
    for (let i = 0; i < 1200; i++) {
      await store.create({ id: `s${i}`, packageId: null, snapshot, entry: entry('session.created', 'idle') });
      largestWal = Math.max(largestWal, statSync(`${path}-wal`).size);
      // A moment now and then, as a server's sessions leave between their writes.
      if (i % 25 === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    return { store, path, largestWal };
  }

  it("never checkpoints inside the store's own commits", async () => {
    const { largestWal } = await writeMany({ intervalMs: 3_600_000 });
    // SQLite's automatic checkpoint would have started the WAL over at 1,000 pages (4 MB).
    expect(largestWal).toBeGreaterThan(12_000_000);
  });

  it('starts the WAL over while sessions keep writing (a PASSIVE checkpoint alone would not), and every write reads back', async () => {
    const { store, largestWal } = await writeMany({ intervalMs: 10 });
    expect(largestWal).toBeLessThan(4_000_000);
    expect(await listAll(store)).toHaveLength(1200);
  });

  it("ends the worker's connection on close: SQLite removes the WAL file, as it does without the worker", async () => {
    const { path, remove } = tempDb();
    cleanups.push(remove);
    const store = new SqliteStore(path, { backgroundCheckpoints: { intervalMs: 5 } });
    await store.create({ id: 's1', packageId: null, snapshot: { step: 0 }, entry: entry('session.created', 'idle') });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(existsSync(`${path}-wal`)).toBe(true);
    await store.close();
    expect(existsSync(`${path}-wal`)).toBe(false);
    const reopened = new SqliteStore(path);
    expect((await reopened.load('s1'))?.snapshot).toEqual({ step: 0 });
    await reopened.close();
  });
});
