/**
 * Two OS processes, one SQLite file, one session: waiting for the lock (retried without
 * blocking) makes the writers queue for it, and the revision check turns every lost race
 * into a ConflictError that the writer retries — so nothing is lost and nothing is written twice.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConflictError } from '../../src/core/errors.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { testScript } from '../support/script-build.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const created = { kind: 'created', type: 'session.created', payload: {}, state: 'idle' } as const;

interface WriterResult {
  writer: string;
  appended: number;
  conflicts: number;
}

/** Starts a writer process; resolves `ready` once it has opened the store. */
function startWriter(dbPath: string, sessionId: string, count: number, writer: string) {
  const child = spawn(process.execPath, [testScript('test/support/store-writer.ts'), dbPath, sessionId, String(count), writer], {
    cwd: root,
    stdio: ['pipe', 'pipe', 'pipe'],
    timeout: 60_000,
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
  const ready = new Promise<void>((resolveReady, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk;
      if (stdout.startsWith('ready\n')) resolveReady();
    });
    child.on('error', reject);
  });
  const done = new Promise<WriterResult>((resolveDone, reject) => {
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`writer ${writer} exited with ${code}:\n${stderr}`));
      resolveDone(JSON.parse(stdout.slice('ready\n'.length)) as WriterResult);
    });
  });
  // Without this, a writer that dies before "ready" would leave `ready` pending forever.
  done.catch(() => {});
  return { ready: Promise.race([ready, done.then(() => {})]), done, go: () => child.stdin.end('go\n') };
}

describe('two writers on one SQLite file', () => {
  let dir: string;
  let dbPath: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'steward-writers-'));
    dbPath = join(dir, 'steward.db');
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('two processes appending 50 times each leave a gapless journal of 100 writes', { timeout: 60_000 }, async () => {
    const store = new SqliteStore(dbPath);
    await store.create({ id: 'shared', packageId: null, snapshot: {}, entry: created });

    const writers = [startWriter(dbPath, 'shared', 50, 'A'), startWriter(dbPath, 'shared', 50, 'B')];
    await Promise.all(writers.map((w) => w.ready));
    for (const w of writers) w.go();
    const results = await Promise.all(writers.map((w) => w.done));

    const journal = await store.journal('shared');
    const written = journal.slice(1); // seq 1 is the 'created' entry from store.create
    expect(written).toHaveLength(100);
    expect(journal.map((e) => e.seq)).toEqual(Array.from({ length: 101 }, (_, i) => i + 1));
    // Each writer's 50 appends landed exactly once, in the order it made them.
    for (const name of ['A', 'B']) {
      const mine = written.map((e) => e.payload as { writer: string; i: number }).filter((p) => p.writer === name);
      expect(mine.map((p) => p.i)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    }
    // Snapshot and journal were written together: the snapshot is the last entry's.
    const session = await store.load('shared');
    expect(session?.revision).toBe(101);
    expect(session?.snapshot).toEqual(journal.at(-1)?.payload);
    expect((await store.list()).sessions[0]?.state).toBe(journal.at(-1)?.state);
    expect(results.map((r) => r.appended)).toEqual([50, 50]);
    await store.close();
  });

  it('a stale revision from a second store on the same file gets ConflictError', async () => {
    const first = new SqliteStore(dbPath);
    const second = new SqliteStore(dbPath);
    try {
      await first.create({ id: 's1', packageId: null, snapshot: { by: 'first' }, entry: created });
      const seenBySecond = await second.load('s1');
      expect(seenBySecond?.revision).toBe(1);

      await first.append({
        id: 's1',
        expectedRevision: 1,
        entries: [{ kind: 'event', type: 'a', payload: {}, state: 'first' }],
        snapshot: { by: 'first', step: 1 },
      });
      const late = second.append({
        id: 's1',
        expectedRevision: seenBySecond!.revision,
        entries: [{ kind: 'event', type: 'b', payload: {}, state: 'second' }],
        snapshot: { by: 'second' },
      });
      await expect(late).rejects.toThrow(ConflictError);
      await expect(late).rejects.toThrow('Session "s1" is at revision 2, but this write expected revision 1');

      expect(await second.load('s1')).toMatchObject({ revision: 2, snapshot: { by: 'first', step: 1 } });
      expect((await second.journal('s1')).map((e) => e.type)).toEqual(['session.created', 'a']);
    } finally {
      await first.close();
      await second.close();
    }
  });
});
