/**
 * The webhook outbox of each store (memory, SQLite, PostgreSQL): messages are written in the
 * transaction of the journal entry that caused them (an append that fails writes none), a
 * claim holds a message until it runs out, only the receivers asked for are claimed, and
 * acknowledged, retried and dead messages are kept as the deliverer says.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConflictError } from '../../src/core/errors.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import type { OutboxInput } from '../../src/store/outbox.js';
import { PostgresStore } from '../../src/store/postgres-store.js';
import type { JournalEntryInput, SessionStore } from '../../src/store/session-store.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { postgresUnavailable } from '../support/postgres.js';
import { useTempDir } from '../support/temp.js';
import { usePostgres } from '../support/use-postgres.js';

const temp = useTempDir('steward-outbox-');
const server = usePostgres();
let pgUrl = '';
beforeAll(async () => {
  if (!postgresUnavailable) pgUrl = await server.createDatabase();
}, 60_000);

const A = 'http://127.0.0.1:1/a';
const B = 'http://127.0.0.1:1/b';
const message = (id: string, receiver = A): OutboxInput => ({ id, receiver, type: 'session.waiting', payload: { type: 'session.waiting', data: { n: id } } });
const entry = (type: string, outbox?: OutboxInput[]): JournalEntryInput => ({
  kind: 'event',
  type,
  payload: { type },
  state: 'waiting_user.input',
  ...(outbox ? { outbox } : {}),
});

/** Each store, and how a second deliverer reaches the same data (another process's store; for memory, the same object). */
const stores: Array<[string, () => SessionStore, boolean, (first: SessionStore) => SessionStore]> = [
  ['MemoryStore', () => new MemoryStore(), false, (first) => first],
  [
    'SqliteStore',
    () => new SqliteStore(join(temp.path(`o-${randomBytes(4).toString('hex')}`), 'steward.db')),
    false,
    (first) => new SqliteStore((first as SqliteStore).path),
  ],
  [
    'PostgresStore',
    () => new PostgresStore(pgUrl, { schema: `o_${randomBytes(5).toString('hex')}` }),
    true,
    (first) => new PostgresStore(pgUrl, { schema: (first as PostgresStore).schema }),
  ],
];

for (const [name, open, needsPostgres, openAgain] of stores) {
  describe.skipIf(needsPostgres && postgresUnavailable !== null)(`${name} webhook outbox`, () => {
    let store: SessionStore;
    afterEach(async () => {
      await store?.close();
    });
    const outbox = () => store.outbox!;

    it('keeps the messages of an entry with it, claims each once until the claim runs out, and forgets an acknowledged one', async () => {
      store = open();
      let woken = 0;
      const unwatch = await outbox().watch(() => (woken += 1));
      await store.create({ id: 's1', packageId: null, snapshot: {}, entry: { ...entry('created', [message('msg_1'), message('msg_2', B)]), kind: 'created' } });
      await store.append({ id: 's1', expectedRevision: 1, entries: [entry('a'), entry('b', [message('msg_3')])], snapshot: {} });
      expect(await outbox().counts()).toEqual({ pending: 3, dead: 0 });

      const claimed = await outbox().claim({ receivers: [A], now: 1000, claimMs: 500, limit: 10 });
      expect(claimed.map((m) => [m.id, m.entrySeq, m.sessionId, m.attempts])).toEqual([
        ['msg_1', 1, 's1', 0],
        ['msg_3', 3, 's1', 0],
      ]);
      expect(claimed[0]!.payload).toEqual({ type: 'session.waiting', data: { n: 'msg_1' } });
      // Held while claimed; due again once the claim runs out.
      expect(await outbox().claim({ receivers: [A], now: 1499, claimMs: 500, limit: 10 })).toEqual([]);
      await outbox().delivered('msg_1');
      expect((await outbox().claim({ receivers: [A], now: 1500, claimMs: 500, limit: 10 })).map((m) => m.id)).toEqual(['msg_3']);
      expect(await outbox().counts()).toEqual({ pending: 2, dead: 0 });
      // Two commits added messages. Memory and SQLite wake once for each, by then; PostgreSQL hears
      // its commits' notifications a moment later (and every session write, not only these).
      if (needsPostgres) await expect.poll(() => woken).toBeGreaterThanOrEqual(2);
      else expect(woken).toBe(2);
      await unwatch();
    });

    it('an append that fails writes no message', async () => {
      store = open();
      await store.create({ id: 's2', packageId: null, snapshot: {}, entry: { ...entry('created'), kind: 'created' } });
      await expect(store.append({ id: 's2', expectedRevision: 7, entries: [entry('a', [message('msg_x')])], snapshot: {} })).rejects.toThrow(ConflictError);
      // A payload that cannot be stored (JSON has no BigInt, a copy no function) fails the whole write too.
      const unstorable = { n: 1n, f: () => 1 };
      await expect(
        store.append({ id: 's2', expectedRevision: 1, entries: [entry('a', [{ ...message('msg_y'), payload: unstorable }])], snapshot: {} }),
      ).rejects.toThrow();
      expect(await outbox().counts()).toEqual({ pending: 0, dead: 0 });
      expect((await store.journal('s2')).length).toBe(1);
    });

    it('retries later, keeps a dead letter with its reason, and retries it again when asked', async () => {
      store = open();
      await store.create({ id: 's3', packageId: null, snapshot: {}, entry: { ...entry('created', [message('msg_a'), message('msg_b')]), kind: 'created' } });
      await outbox().claim({ receivers: [A], now: 0, claimMs: 100, limit: 10 });
      await outbox().retryLater('msg_a', { attempts: 1, nextAt: 5000, error: 'HTTP 500' });
      await outbox().deadLetter('msg_b', { attempts: 8, error: 'network error ECONNREFUSED' });
      expect(await outbox().counts()).toEqual({ pending: 1, dead: 1 });
      expect(await outbox().claim({ receivers: [A], now: 4999, claimMs: 100, limit: 10 })).toEqual([]);
      const [again] = await outbox().claim({ receivers: [A], now: 5000, claimMs: 60_000, limit: 10 });
      expect(again).toMatchObject({ id: 'msg_a', attempts: 1, lastError: 'HTTP 500' });
      expect(await outbox().deadLetters(10)).toMatchObject([
        { id: 'msg_b', status: 'dead', attempts: 8, lastError: 'network error ECONNREFUSED', receiver: A },
      ]);
      expect(await outbox().retryDead('msg_nope', 0)).toBe(0);
      expect(await outbox().retryDead(undefined, 6000)).toBe(1);
      expect((await outbox().claim({ receivers: [A], now: 6000, claimMs: 100, limit: 10 })).map((m) => [m.id, m.attempts])).toEqual([['msg_b', 0]]);
    });

    it('two deliverers claiming at once never get the same message', async () => {
      store = open();
      const other = openAgain(store);
      try {
        const messages = Array.from({ length: 40 }, (_, i) => message(`msg_${i}`));
        await store.create({ id: 's4', packageId: null, snapshot: {}, entry: { ...entry('created', messages), kind: 'created' } });
        const claims = await Promise.all([store, other, store, other].map((s) => s.outbox!.claim({ receivers: [A], now: 0, claimMs: 60_000, limit: 15 })));
        const ids = claims.flat().map((m) => m.id);
        expect(new Set(ids).size).toBe(ids.length);
        expect(ids.length).toBe(40);
      } finally {
        if (other !== store) await other.close();
      }
    });
  });
}
