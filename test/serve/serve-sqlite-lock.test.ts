/**
 * `steward serve` on SQLite while another process holds the write lock (a CLI writing, or a
 * stuck program: test/support/lock-holder.mjs): a send waits for the lock, and meanwhile
 * `/healthz` answers 200 saying `storeBusy`, and reads answer. Released in time, the send
 * completes; held past the busy timeout, it fails with store_locked, nothing is lost and the
 * session goes on with the next send.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DemoModel } from '../../src/models/demo-model.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import { startServe } from '../../src/serve/server.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { root, until } from '../support/cli-process.js';
import { useTempDir } from '../support/temp.js';
import { client } from './http.js';

const tmp = useTempDir('steward-serve-lock-');
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

let files = 0;
async function serveOnSqlite(busyTimeoutMs: number) {
  const path = tmp.path(`serve-${++files}.db`);
  const store = new SqliteStore(path, { busyTimeoutMs });
  cleanups.push(() => store.close());
  const runtime = createRuntime({ model: new DemoModel(), store });
  const server = await startServe({ runtime, store, port: 0, log: () => {} });
  cleanups.push(() => server.close());
  return { path, store, http: client(server.url) };
}

/** Another process holding the file's write lock (an open BEGIN IMMEDIATE) until `release`. */
async function holdWriteLock(path: string): Promise<{ release: () => Promise<void> }> {
  const holder: ChildProcess = spawn(process.execPath, [join(root, 'test/support/lock-holder.mjs'), path, 'write'], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  holder.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = once(holder, 'exit');
  cleanups.push(() => holder.kill('SIGKILL'));
  await until(() => out.includes('locked'), 'the lock holder');
  return {
    release: async () => {
      holder.kill('SIGKILL');
      await exited;
    },
  };
}

describe('steward serve while another process holds the SQLite write lock', () => {
  it('a send waits for the lock; /healthz (200, storeBusy) and reads answer meanwhile; the send completes once released', { timeout: 60_000 }, async () => {
    const { path, http } = await serveOnSqlite(20_000);
    const id: string = (await http.post('/sessions', { packageId: 'tiny' })).body.view.id;
    const lock = await holdWriteLock(path);

    const order: string[] = [];
    const sending = http.post(`/sessions/${id}/events`, { type: 'user_submitted_input', text: 'Green tea.' }).then((reply) => {
      order.push('send answered');
      return reply;
    });
    await until(async () => (await http.get('/healthz')).body.storeBusy === true, 'healthz to say the store is busy');
    const health = await http.get('/healthz');
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ ok: true, draining: false, storeBusy: true });
    order.push('healthz answered');
    const read = await http.get(`/sessions/${id}`);
    expect(read.status).toBe(200);
    const journal = await http.get(`/sessions/${id}/journal`);
    expect(journal.status).toBe(200);
    expect(journal.body.entries.map((e: { seq: number }) => e.seq)).toEqual([1]);
    const list = await http.get('/sessions');
    expect(list.body.sessions.map((s: { id: string }) => s.id)).toEqual([id]);
    order.push('reads answered');

    // Said before the kill: the send may be answered before this process sees the holder exit.
    order.push('releasing the lock');
    await lock.release();
    const sent = await sending;
    expect(order).toEqual(['healthz answered', 'reads answered', 'releasing the lock', 'send answered']);
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    expect(sent.body).toMatchObject({ ok: true });
    const after = await http.get(`/sessions/${id}/journal`);
    const entries: Array<{ seq: number; type: string }> = after.body.entries;
    expect(entries.map((e) => e.seq)).toEqual(entries.map((_, i) => i + 1));
    expect(entries.filter((e) => e.type === 'user_submitted_input')).toHaveLength(1);
    expect((await http.get('/healthz')).body).toMatchObject({ ok: true, storeBusy: false });
  });

  it('a lock held past the busy timeout: the send fails with store_locked, nothing is lost, the next send goes on', { timeout: 60_000 }, async () => {
    const { path, http, store } = await serveOnSqlite(3_000);
    const id: string = (await http.post('/sessions', { packageId: 'tiny' })).body.view.id;
    const saved = await store.load(id);
    const lock = await holdWriteLock(path);

    const order: string[] = [];
    const sending = http.post(`/sessions/${id}/events`, { type: 'user_submitted_input', text: 'Green tea.' }).then((reply) => {
      order.push('send answered');
      return reply;
    });
    await until(async () => (await http.get('/healthz')).body.storeBusy === true, 'healthz to say the store is busy');
    order.push('healthz said busy');
    const failed = await sending;
    expect(order).toEqual(['healthz said busy', 'send answered']);
    // The client is told to retry; the file and the wait are for the server's log only.
    expect(failed.status).toBe(503);
    expect(failed.body).toMatchObject({ ok: false, error: { code: 'store_locked', message: expect.stringContaining('locked by another process') } });
    await lock.release();

    // Nothing was written: the session is as it was saved, and takes the same event again.
    expect(await store.load(id)).toMatchObject({ revision: saved!.revision });
    const again = await http.post(`/sessions/${id}/events`, { type: 'user_submitted_input', text: 'Green tea.' });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body).toMatchObject({ ok: true });
    const entries = await store.journal(id);
    expect(entries.map((e) => e.seq)).toEqual(entries.map((_, i) => i + 1));
    expect(entries.filter((e) => e.type === 'user_submitted_input')).toHaveLength(1);
  });
});
