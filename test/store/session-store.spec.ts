/**
 * The SessionStore contract, written once and run against every backend
 * (memory-store.test.ts, sqlite-store.test.ts, postgres-store.test.ts). A new backend passes this file or is not done.
 */
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConflictError, InvalidCursorError, SessionNotFoundError, UserError } from '../../src/core/errors.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { listAll } from '../../src/store/list-page.js';
import { visibleTo } from '../../src/store/participants.js';
import { SEND_KEYS_KEPT, type JournalEntryInput, type SessionPage, type SessionStore } from '../../src/store/session-store.js';

export interface StoreFixture {
  store: SessionStore;
  cleanup: () => Promise<void>;
  /**
   * Sets a session's updated_at to exactly `at` (ISO, up to microseconds), for stores whose
   * clock a test cannot fake (PostgreSQL writes the database's now()). Without it the spec
   * fakes Date for the writes that must share a time.
   */
  stamp?: (id: string, at: string) => Promise<void>;
}

/** Waits until Date.now() has moved on, so the next write is stamped later than the last one. */
async function nextMillisecond(): Promise<void> {
  const now = Date.now();
  while (Date.now() <= now) await new Promise((resolve) => setTimeout(resolve, 1));
}

export function entry(type: string, state: string, payload: unknown = { type }): JournalEntryInput {
  return { kind: 'event', type, payload, state };
}

const created = (id: string): JournalEntryInput => ({ kind: 'created', type: 'session.created', payload: { id }, state: 'idle' });

export function describeSessionStore(name: string, makeStore: () => Promise<StoreFixture>): void {
  describe(`${name} (SessionStore contract)`, () => {
    let store: SessionStore;
    let cleanup: () => Promise<void>;
    let stamp: StoreFixture['stamp'];

    beforeEach(async () => {
      ({ store, cleanup, stamp } = await makeStore());
    });
    afterEach(async () => {
      await cleanup();
    });

    const createSession = (id: string, snapshot: unknown = { step: 0 }) => store.create({ id, packageId: 'pkg', snapshot, entry: created(id) });

    it('creates a session at revision 1 with its first journal entry, and loads it back', async () => {
      const session = await createSession('s1', { step: 0, nested: { list: [1, 2] } });
      expect(session).toMatchObject({ id: 's1', packageId: 'pkg', revision: 1, snapshot: { step: 0, nested: { list: [1, 2] } } });
      expect(session.createdAt).toBe(session.updatedAt);
      expect(new Date(session.createdAt).toISOString()).toBe(session.createdAt);

      expect(await store.load('s1')).toEqual(session);
      expect(await store.journal('s1')).toEqual([
        { sessionId: 's1', seq: 1, at: session.createdAt, kind: 'created', type: 'session.created', payload: { id: 's1' }, state: 'idle' },
      ]);
    });

    it('keeps a package version once per hash, written with the session or an append', async () => {
      const v1 = { hash: `sha256:${'1'.repeat(64)}`, packageId: 'pkg', json: '{"id":"pkg"}' };
      const v2 = { hash: `sha256:${'2'.repeat(64)}`, packageId: 'pkg', json: '{"id":"pkg","title":"2"}' };
      expect(await store.packageVersion(v1.hash)).toBeUndefined();
      await store.create({ id: 'p1', packageId: 'pkg', snapshot: {}, entry: created('p1'), packageVersions: [v1] });
      await store.create({ id: 'p2', packageId: 'pkg', snapshot: {}, entry: created('p2'), packageVersions: [v1] });
      await store.append({ id: 'p1', expectedRevision: 1, entries: [], snapshot: {}, packageVersions: [v1, v2] });
      expect(await store.packageVersion(v1.hash)).toEqual(v1);
      expect(await store.packageVersion(v2.hash)).toEqual(v2);
    });

    it('journals an idempotency key with its entry, keeps its result, and keeps only the latest SEND_KEYS_KEPT per session', async () => {
      await createSession('k1');
      let revision = 1;
      const keyed = (key: string) => ({ ...entry('user_submitted_input', 'waiting_user.input'), sendKey: { key, fingerprint: `f-${key}` } });
      revision = await store.append({ id: 'k1', expectedRevision: revision, entries: [entry('user_x', 'a'), keyed('first')], snapshot: {} });
      expect(await store.sendKey('k1', 'first')).toEqual({ key: 'first', fingerprint: 'f-first', seq: 3, result: null });
      await store.saveSendResult('k1', 'first', { ok: true, view: { state: 'a' } });
      expect((await store.sendKey('k1', 'first'))?.result).toEqual({ ok: true, view: { state: 'a' } });
      expect(await store.sendKey('k1', 'unknown')).toBeUndefined();
      expect(await store.sendKey('other', 'first')).toBeUndefined();
      for (let i = 0; i < SEND_KEYS_KEPT; i++) revision = await store.append({ id: 'k1', expectedRevision: revision, entries: [keyed(`k${i}`)], snapshot: {} });
      expect(await store.sendKey('k1', 'first')).toBeUndefined();
      expect(await store.sendKey('k1', 'k0')).toBeDefined();
      expect(await store.sendKey('k1', `k${SEND_KEYS_KEPT - 1}`)).toMatchObject({ seq: 3 + SEND_KEYS_KEPT });
    });

    it('keeps a null package id', async () => {
      await store.create({ id: 'bare', packageId: null, snapshot: {}, entry: created('bare') });
      expect((await store.load('bare'))?.packageId).toBeNull();
    });

    it('loads undefined, and an empty journal, for an unknown id', async () => {
      expect(await store.load('nope')).toBeUndefined();
      expect(await store.journal('nope')).toEqual([]);
    });

    it('refuses to create a duplicate id with ConflictError and keeps the original', async () => {
      await createSession('dup', { original: true });
      await expect(createSession('dup', { original: false })).rejects.toThrow(ConflictError);
      expect((await store.load('dup'))?.snapshot).toEqual({ original: true });
      expect(await store.journal('dup')).toHaveLength(1);
    });

    it('append increments the revision by one and numbers entries without gaps', async () => {
      await createSession('s1');
      expect(
        await store.append({ id: 's1', expectedRevision: 1, entries: [entry('a', 'working'), entry('b', 'waiting_user.review')], snapshot: { step: 1 } }),
      ).toBe(2);
      expect(await store.append({ id: 's1', expectedRevision: 2, entries: [entry('c', 'done')], snapshot: { step: 2 } })).toBe(3);

      const journal = await store.journal('s1');
      expect(journal.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
      expect(journal.map((e) => e.type)).toEqual(['session.created', 'a', 'b', 'c']);
      const session = await store.load('s1');
      expect(session).toMatchObject({ revision: 3, snapshot: { step: 2 } });
      expect(session!.updatedAt >= session!.createdAt).toBe(true);
      expect((await store.list()).sessions[0]).toMatchObject({ id: 's1', revision: 3, state: 'done' });
    });

    it('append without entries replaces the snapshot and keeps the state', async () => {
      await createSession('s1');
      await store.append({ id: 's1', expectedRevision: 1, entries: [entry('a', 'working')], snapshot: { step: 1 } });
      expect(await store.append({ id: 's1', expectedRevision: 2, entries: [], snapshot: { step: 2 } })).toBe(3);
      expect((await store.load('s1'))?.snapshot).toEqual({ step: 2 });
      expect((await store.list()).sessions[0]).toMatchObject({ revision: 3, state: 'working' });
      expect(await store.journal('s1')).toHaveLength(2);
    });

    it('a write marked durable: false is a write like any other: journal, snapshot, archive, revision check', async () => {
      await createSession('s1');
      const added = [{ kind: 'message' as const, key: 'manager', n: 0, value: { role: 'user', content: 'hi' } }];
      expect(
        await store.append({ id: 's1', expectedRevision: 1, entries: [{ ...entry('loop', 'running'), added }], snapshot: { step: 1 }, durable: false }),
      ).toBe(2);
      expect(await store.append({ id: 's1', expectedRevision: 2, entries: [entry('wait', 'waiting')], snapshot: { step: 2 } })).toBe(3);
      await expect(store.append({ id: 's1', expectedRevision: 2, entries: [entry('late', 'x')], snapshot: {}, durable: false })).rejects.toThrow(ConflictError);
      expect((await store.journal('s1')).map((e) => [e.seq, e.type, e.state])).toEqual([
        [1, 'session.created', 'idle'],
        [2, 'loop', 'running'],
        [3, 'wait', 'waiting'],
      ]);
      expect((await store.load('s1'))?.snapshot).toEqual({ step: 2 });
      expect((await store.archived('s1', 'message', 'manager')).map((i) => [i.n, i.entrySeq])).toEqual([[0, 2]]);
    });

    it('append with a stale revision throws ConflictError and writes nothing', async () => {
      await createSession('s1');
      await store.append({ id: 's1', expectedRevision: 1, entries: [entry('a', 'working')], snapshot: { step: 1 } });
      const before = { session: await store.load('s1'), journal: await store.journal('s1'), list: await store.list() };

      const stale = store.append({ id: 's1', expectedRevision: 1, entries: [entry('late', 'elsewhere')], snapshot: { step: 'late' } });
      await expect(stale).rejects.toThrow(ConflictError);
      await expect(stale).rejects.toThrow(/"s1".*revision 2.*revision 1.*reload the session and send again/s);
      // A revision from the future is just as wrong.
      await expect(store.append({ id: 's1', expectedRevision: 7, entries: [entry('future', 'x')], snapshot: {} })).rejects.toThrow(ConflictError);

      expect(await store.load('s1')).toEqual(before.session);
      expect(await store.journal('s1')).toEqual(before.journal);
      expect(await store.list()).toEqual(before.list);
    });

    it('append to an unknown session throws SessionNotFoundError', async () => {
      await expect(store.append({ id: 'ghost', expectedRevision: 1, entries: [entry('a', 'x')], snapshot: {} })).rejects.toThrow(SessionNotFoundError);
    });

    it('archives what each entry added in the same write, read back by kind, key and range', async () => {
      await store.create({
        id: 'a',
        packageId: 'pkg',
        snapshot: {},
        entry: { ...created('a'), added: [{ kind: 'version', key: 'seed', n: 1, value: { version: 1, body: 'x' } }] },
      });
      const msg = (n: number) => ({ kind: 'message' as const, key: 'manager', n, value: { role: 'user', content: `m${n}` } });
      await store.append({
        id: 'a',
        expectedRevision: 1,
        entries: [
          { ...entry('e1', 's1'), added: [msg(0), msg(1)] },
          { ...entry('e2', 's2'), added: [msg(2)] },
        ],
        snapshot: { step: 1 },
      });
      await store.append({
        id: 'a',
        expectedRevision: 2,
        entries: [],
        snapshot: { step: 2 },
        archive: [{ kind: 'version', key: 'seed', n: 2, value: { version: 2, body: 'y' } }],
      });
      expect(await store.archived('a', 'message', 'manager')).toEqual([
        { ...msg(0), entrySeq: 2 },
        { ...msg(1), entrySeq: 2 },
        { ...msg(2), entrySeq: 3 },
      ]);
      expect((await store.archived('a', 'message', 'manager', { from: 1, to: 1 })).map((i) => i.value)).toEqual([{ role: 'user', content: 'm1' }]);
      expect((await store.archived('a', 'version', 'seed')).map((i) => [i.n, i.entrySeq])).toEqual([
        [1, 1],
        [2, 3],
      ]);
      expect(await store.archived('a', 'message', 'worker')).toEqual([]);
      expect(await store.archived('nobody', 'message', 'manager')).toEqual([]);
      // The journal rows stay as they were: what an entry added is not part of its payload.
      expect((await store.journal('a')).map((e) => Object.keys(e).includes('added'))).toEqual([false, false, false]);
    });

    it('a refused append archives nothing', async () => {
      await createSession('r');
      await store.append({ id: 'r', expectedRevision: 1, entries: [entry('e1', 's1')], snapshot: { step: 1 } });
      await expect(
        store.append({
          id: 'r',
          expectedRevision: 1,
          entries: [{ ...entry('e2', 's2'), added: [{ kind: 'message', key: 'manager', n: 0, value: { role: 'user', content: 'lost' } }] }],
          snapshot: { step: 9 },
        }),
      ).rejects.toBeInstanceOf(ConflictError);
      expect(await store.archived('r', 'message', 'manager')).toEqual([]);
    });

    it('pages the journal with afterSeq and limit', async () => {
      await createSession('s1');
      await store.append({ id: 's1', expectedRevision: 1, entries: [entry('a', 'x'), entry('b', 'x'), entry('c', 'x'), entry('d', 'x')], snapshot: {} });
      const seqs = async (options?: { afterSeq?: number; limit?: number }) => (await store.journal('s1', options)).map((e) => e.seq);

      expect(await seqs()).toEqual([1, 2, 3, 4, 5]);
      expect(await seqs({ afterSeq: 2 })).toEqual([3, 4, 5]);
      expect(await seqs({ limit: 2 })).toEqual([1, 2]);
      expect(await seqs({ afterSeq: 1, limit: 2 })).toEqual([2, 3]);
      expect(await seqs({ afterSeq: 4, limit: 10 })).toEqual([5]);
      expect(await seqs({ afterSeq: 5 })).toEqual([]);
      expect(await seqs({ limit: 0 })).toEqual([]);
    });

    it('lists sessions most recently updated first, with their current state', async () => {
      expect(await store.list()).toEqual({ sessions: [], next: null });
      await createSession('a');
      await nextMillisecond();
      await createSession('b');
      await nextMillisecond();
      await createSession('c');
      await nextMillisecond();
      await store.append({ id: 'a', expectedRevision: 1, entries: [entry('go', 'working')], snapshot: {} });

      const list = (await store.list()).sessions;
      expect(list.map((s) => s.id)).toEqual(['a', 'c', 'b']);
      expect(list[0]).toMatchObject({ id: 'a', packageId: 'pkg', revision: 2, state: 'working' });
      expect(list[1]).toMatchObject({ id: 'c', revision: 1, state: 'idle' });
      expect(Object.keys(list[0]!).sort()).toEqual(['createdAt', 'id', 'owner', 'packageId', 'participants', 'revision', 'state', 'updatedAt']);
      expect(list[0]).toMatchObject({ owner: null, participants: [] });
    });

    /** Every id of the store, read `limit` at a time, checking each page is full but the last. */
    const walk = async (limit: number): Promise<string[]> => {
      const ids: string[] = [];
      let after: string | null = null;
      for (let pages = 0; ; pages++) {
        expect(pages).toBeLessThan(100);
        const page: SessionPage = await store.list({ limit, after });
        ids.push(...page.sessions.map((s) => s.id));
        if (page.next === null) return ids;
        expect(page.sessions).toHaveLength(limit);
        after = page.next;
      }
    };

    it('lists a page at a time, newest first: `next` goes on where the page ended and is null on the last page', async () => {
      for (const id of ['a', 'b', 'c', 'd', 'e', 'f', 'g']) {
        await createSession(id);
        await nextMillisecond();
      }
      const first = await store.list({ limit: 3 });
      expect(first.sessions.map((s) => s.id)).toEqual(['g', 'f', 'e']);
      expect(typeof first.next).toBe('string');
      const second = await store.list({ limit: 3, after: first.next });
      expect(second.sessions.map((s) => s.id)).toEqual(['d', 'c', 'b']);
      expect(await store.list({ limit: 3, after: second.next })).toMatchObject({ sessions: [{ id: 'a' }], next: null });
      // A page that ends exactly at the last session says so: no empty page follows.
      expect((await store.list({ limit: 7 })).next).toBeNull();
      for (const limit of [1, 2, 6, 7, 1000]) expect(await walk(limit)).toEqual(['g', 'f', 'e', 'd', 'c', 'b', 'a']);
    });

    it('pages 100 sessions by default', async () => {
      for (let i = 0; i < 101; i++) await createSession(`s${String(i).padStart(3, '0')}`);
      const page = await store.list();
      expect(page.sessions).toHaveLength(100);
      expect((await store.list({ after: page.next })).sessions).toHaveLength(1);
    });

    it('breaks ties on updatedAt by id, descending, and pages through them without skipping or repeating one', async () => {
      const at = '2031-05-06T07:08:09.123Z';
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(new Date(at));
      try {
        for (const id of ['b', 'e', 'a', 'd', 'c']) await createSession(id);
      } finally {
        vi.useRealTimers();
      }
      for (const id of ['a', 'b', 'c', 'd', 'e']) await stamp?.(id, '2031-05-06T07:08:09.123456Z');
      const { sessions } = await store.list();
      expect(new Set(sessions.map((s) => s.updatedAt))).toEqual(new Set([at]));
      expect(sessions.map((s) => s.id)).toEqual(['e', 'd', 'c', 'b', 'a']);
      for (const limit of [1, 2, 3, 4]) expect(await walk(limit)).toEqual(['e', 'd', 'c', 'b', 'a']);
    });

    it('a session written between two pages moves to the front: the next page neither repeats it nor stops early', async () => {
      for (const id of ['a', 'b', 'c', 'd']) {
        await createSession(id);
        await nextMillisecond();
      }
      const first = await store.list({ limit: 2 });
      expect(first.sessions.map((s) => s.id)).toEqual(['d', 'c']);
      await store.append({ id: 'c', expectedRevision: 1, entries: [entry('seen', 'working')], snapshot: {} }); // already shown
      await nextMillisecond();
      await store.append({ id: 'a', expectedRevision: 1, entries: [entry('unseen', 'working')], snapshot: {} }); // not shown yet
      expect(await store.list({ limit: 2, after: first.next })).toMatchObject({ sessions: [{ id: 'b' }], next: null });
      expect(await walk(1)).toEqual(['a', 'c', 'd', 'b']);
    });

    it('refuses a limit out of 1–1000 (UserError) and a cursor it did not hand out (InvalidCursorError)', async () => {
      await createSession('a');
      await createSession('b');
      for (const limit of [0, -1, 1.5, 1001, Number.NaN]) {
        await expect(store.list({ limit })).rejects.toThrow(UserError);
        await expect(store.list({ limit })).rejects.toThrow(/limit must be a whole number from 1 to 1000/);
      }
      const cursor = (await store.list({ limit: 1 })).next!;
      const forged = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
      const bad: unknown[] = [
        '',
        'not a cursor!',
        cursor.slice(0, -3),
        `${cursor}x`.repeat(200),
        Buffer.from('{oops').toString('base64url'),
        forged({ updatedAt: '2031-01-01T00:00:00.000Z', id: 'a' }),
        forged(['2031-02-30T00:00:00.000Z', 'a']),
        forged(['0000-01-01T00:00:00.000Z', 'a']),
        forged(['2031-01-01 00:00:00', 'a']),
        forged(['2031-01-01T00:00:00.000Z', 'a\u0000b']),
        forged(['2031-01-01T00:00:00.000Z', '']),
        42,
      ];
      for (const after of bad) {
        const listing = store.list({ limit: 1, after: after as string });
        await expect(listing).rejects.toThrow(InvalidCursorError);
        await expect(listing).rejects.toThrow(/pass the `next` of the previous page unchanged/);
      }
      // A well-formed position nobody handed out is still a position: it lists what sorts after it.
      expect((await store.list({ after: forged(['2999-01-01T00:00:00.000Z', 'z']) })).sessions.map((s) => s.id)).toEqual(['b', 'a']);
    });

    it('listAll reads every page', async () => {
      for (const id of ['a', 'b', 'c', 'd', 'e']) {
        await createSession(id);
        await nextMillisecond();
      }
      expect((await listAll(store, 2)).map((s) => s.id)).toEqual(['e', 'd', 'c', 'b', 'a']);
      expect((await listAll(store)).map((s) => s.id)).toEqual(['e', 'd', 'c', 'b', 'a']);
    });

    it('keeps who a session belongs to — its owner and participants, in their order — through load, appends and list', async () => {
      const participants = ['bob', 'group:ops', 'zoe'];
      const made = await store.create({ id: 'a1', packageId: 'pkg', snapshot: {}, entry: created('a1'), owner: 'alice', participants });
      participants.push('mallory'); // the caller's array, changed afterwards: not what is stored
      expect(made).toMatchObject({ owner: 'alice', participants: ['bob', 'group:ops', 'zoe'] });
      expect(await store.load('a1')).toEqual(made);
      await createSession('nobody');
      expect(await store.load('nobody')).toMatchObject({ owner: null, participants: [] });
      await store.append({ id: 'a1', expectedRevision: 1, entries: [entry('go', 'working')], snapshot: {} });
      expect(await store.load('a1')).toMatchObject({ revision: 2, owner: 'alice', participants: ['bob', 'group:ops', 'zoe'] });
      const listed = (await store.list()).sessions;
      expect(listed.find((s) => s.id === 'a1')).toMatchObject({ owner: 'alice', participants: ['bob', 'group:ops', 'zoe'] });
      expect(listed.find((s) => s.id === 'nobody')).toMatchObject({ owner: null, participants: [] });
    });

    it('lists only the sessions `visibleTo` names — owned, or shared by name or group — paged by keyset without repeating or missing one', async () => {
      const owners = ['alice', 'bob', 'carol', null];
      for (let i = 0; i < 250; i++) {
        const id = `s${String(i).padStart(3, '0')}`;
        const participants = [...(i % 5 === 0 ? ['dan'] : []), ...(i % 7 === 0 ? ['group:ops'] : []), ...(i % 11 === 0 ? ['alice', 'dan'] : [])];
        await store.create({ id, packageId: 'pkg', snapshot: {}, entry: created(id), owner: owners[i % 4]!, participants });
      }
      const everything = await listAll(store, 100);
      expect(everything).toHaveLength(250);
      /** Every page of what `viewer` sees, checked: full pages but the last, each session once. */
      const walkAs = async (viewer: ReturnType<typeof visibleTo>, limit: number): Promise<string[]> => {
        const ids: string[] = [];
        let after: string | null = null;
        for (let pages = 0; ; pages++) {
          expect(pages).toBeLessThan(300);
          const page: SessionPage = await store.list({ limit, after, visibleTo: viewer });
          ids.push(...page.sessions.map((s) => s.id));
          if (page.next === null) return ids;
          expect(page.sessions).toHaveLength(limit);
          after = page.next;
        }
      };
      const cases: Array<[ReturnType<typeof visibleTo>, (s: (typeof everything)[number]) => boolean]> = [
        [visibleTo('alice'), (s) => s.owner === 'alice' || s.participants.includes('alice')],
        [visibleTo('dan', ['ops']), (s) => s.participants.includes('dan') || s.participants.includes('group:ops')],
        [visibleTo('bob', ['ops', 'qa']), (s) => s.owner === 'bob' || s.participants.includes('group:ops')],
        [visibleTo('erin'), () => false],
      ];
      for (const [viewer, sees] of cases) {
        const expected = everything.filter(sees).map((s) => s.id);
        for (const limit of [100, 7]) {
          const ids = await walkAs(viewer, limit);
          expect(new Set(ids).size, `${viewer.owner} by ${limit}`).toBe(ids.length);
          expect(ids, `${viewer.owner} by ${limit}`).toEqual(expected);
        }
      }
      // 63 owned (every 4th), 23 naming her (every 11th), 6 both.
      expect(everything.filter((s) => s.owner === 'alice' || s.participants.includes('alice')).length).toBe(80);
      // A session of hers written between two pages moves to the front: not shown again, none skipped.
      const first = await store.list({ limit: 10, visibleTo: visibleTo('alice') });
      const shown = first.sessions[3]!;
      await store.append({ id: shown.id, expectedRevision: shown.revision, entries: [entry('seen', 'working')], snapshot: {} });
      expect((await store.list({ limit: 1, visibleTo: visibleTo('alice') })).sessions[0]!.id).toBe(shown.id);
      const second = await store.list({ limit: 1000, after: first.next, visibleTo: visibleTo('alice') });
      expect(second.sessions.map((s) => s.id)).not.toContain(shown.id);
      expect(new Set([...first.sessions, ...second.sessions].map((s) => s.id)).size).toBe(80);
    });

    const due = (wait: number, level: number, dueAt: string) => ({ wait, level, dueAt });

    it('keeps a deadline: set at create or by an append, kept by an append that names none, cleared by null; load returns it', async () => {
      const first = due(1, 0, '2031-01-01T00:00:00.000Z');
      const made = await store.create({ id: 'd1', packageId: 'pkg', snapshot: {}, entry: created('d1'), deadline: first });
      expect(made.deadline).toEqual(first);
      expect(await store.load('d1')).toEqual(made);
      expect((await createSession('plain')).deadline).toBeNull();
      expect((await store.load('plain'))?.deadline).toBeNull();

      await store.append({ id: 'd1', expectedRevision: 1, entries: [entry('a', 'waiting_user.review')], snapshot: {} });
      expect((await store.load('d1'))?.deadline).toEqual(first);
      const escalated = due(1, 1, '2031-01-02T00:00:00.000Z');
      await store.append({ id: 'd1', expectedRevision: 2, entries: [entry('deadline_passed', 'waiting_user.review')], snapshot: {}, deadline: escalated });
      expect(await store.load('d1')).toMatchObject({ revision: 3, deadline: escalated });
      // An append without entries writes it too (a snapshot-only write).
      await store.append({ id: 'd1', expectedRevision: 3, entries: [], snapshot: {}, deadline: due(2, 0, '2031-01-03T00:00:00.000Z') });
      expect((await store.load('d1'))?.deadline).toEqual(due(2, 0, '2031-01-03T00:00:00.000Z'));
      await store.append({ id: 'd1', expectedRevision: 4, entries: [entry('approve', 'running')], snapshot: {}, deadline: null });
      expect((await store.load('d1'))?.deadline).toBeNull();
      await store.append({ id: 'd1', expectedRevision: 5, entries: [entry('b', 'running')], snapshot: {} });
      expect((await store.load('d1'))?.deadline).toBeNull();
      // Set on a session created without one.
      await store.append({ id: 'plain', expectedRevision: 1, entries: [entry('wait', 'waiting_user.input')], snapshot: {}, deadline: first });
      expect((await store.load('plain'))?.deadline).toEqual(first);

      // A copy comes back: changing it, or the object written, changes nothing stored.
      const written = due(3, 0, '2031-02-01T00:00:00.000Z');
      await store.append({ id: 'plain', expectedRevision: 2, entries: [], snapshot: {}, deadline: written });
      written.level = 9;
      const loaded = await store.load('plain');
      loaded!.deadline!.wait = 99;
      expect((await store.load('plain'))?.deadline).toEqual(due(3, 0, '2031-02-01T00:00:00.000Z'));
    });

    it('a refused append (stale revision) leaves the deadline as it was, set or cleared', async () => {
      const kept = due(4, 2, '2031-03-01T00:00:00.000Z');
      await store.create({ id: 'r1', packageId: 'pkg', snapshot: {}, entry: created('r1'), deadline: kept });
      await store.append({ id: 'r1', expectedRevision: 1, entries: [entry('a', 'waiting_user.review')], snapshot: {} });
      for (const deadline of [null, due(5, 0, '2030-01-01T00:00:00.000Z')]) {
        await expect(store.append({ id: 'r1', expectedRevision: 1, entries: [entry('late', 'x')], snapshot: {}, deadline })).rejects.toThrow(ConflictError);
      }
      expect((await store.load('r1'))?.deadline).toEqual(kept);
      expect((await store.dueDeadlines('2030-06-01T00:00:00.000Z', 10)).map((d) => d.sessionId)).toEqual([]);
    });

    it('refuses a deadline that is not { wait, level, dueAt } with an ISO-8601 UTC time, writing nothing', async () => {
      const bad: unknown[] = [
        { wait: 1, level: 0, dueAt: '2031-01-01T00:00:00Z' },
        { wait: 1, level: 0, dueAt: '2031-01-01T01:00:00.000+01:00' },
        { wait: 1, level: 0, dueAt: '2031-02-30T00:00:00.000Z' },
        { wait: 1.5, level: 0, dueAt: '2031-01-01T00:00:00.000Z' },
        { wait: 1, level: -1, dueAt: '2031-01-01T00:00:00.000Z' },
        { wait: 1, dueAt: '2031-01-01T00:00:00.000Z' },
        { wait: 2 ** 31, level: 0, dueAt: '2031-01-01T00:00:00.000Z' },
      ];
      await createSession('v1');
      for (const deadline of bad) {
        const write = store.append({ id: 'v1', expectedRevision: 1, entries: [entry('a', 'x')], snapshot: {}, deadline: deadline as never });
        await expect(write).rejects.toThrow(UserError);
        await expect(write).rejects.toThrow(/deadline written with session "v1".*ISO-8601 UTC dueAt/s);
        await expect(store.create({ id: 'v2', packageId: null, snapshot: {}, entry: created('v2'), deadline: deadline as never })).rejects.toThrow(UserError);
      }
      expect(await store.load('v1')).toMatchObject({ revision: 1, deadline: null });
      expect(await store.load('v2')).toBeUndefined();
    });

    it('dueDeadlines: the due ones only (dueAt <= now), the longest due first (ties by id), at most `limit`; a cleared or moved one is no longer found', async () => {
      const at = (day: number) => `2031-01-${String(day).padStart(2, '0')}T00:00:00.000Z`;
      await store.create({ id: 'c', packageId: null, snapshot: {}, entry: created('c'), deadline: due(1, 0, at(3)) });
      await store.create({ id: 'a', packageId: null, snapshot: {}, entry: created('a'), deadline: due(1, 1, at(5)) });
      await store.create({ id: 'b', packageId: null, snapshot: {}, entry: created('b'), deadline: due(2, 0, at(3)) });
      await store.create({ id: 'later', packageId: null, snapshot: {}, entry: created('later'), deadline: due(1, 0, at(20)) });
      await createSession('none');
      expect(await store.dueDeadlines(at(1), 10)).toEqual([]);
      expect(await store.dueDeadlines(at(5), 10)).toEqual([
        { sessionId: 'b', deadline: due(2, 0, at(3)) },
        { sessionId: 'c', deadline: due(1, 0, at(3)) },
        { sessionId: 'a', deadline: due(1, 1, at(5)) },
      ]);
      // A millisecond before a due time is before it.
      expect((await store.dueDeadlines('2031-01-04T23:59:59.999Z', 10)).map((d) => d.sessionId)).toEqual(['b', 'c']);
      expect((await store.dueDeadlines(at(5), 2)).map((d) => d.sessionId)).toEqual(['b', 'c']);
      expect((await store.dueDeadlines(at(31), 1000)).map((d) => d.sessionId)).toEqual(['b', 'c', 'a', 'later']);

      // Fired: b's wait was answered (cleared), c's escalated (moved later).
      await store.append({ id: 'b', expectedRevision: 1, entries: [entry('deadline_passed', 'running')], snapshot: {}, deadline: null });
      await store.append({
        id: 'c',
        expectedRevision: 1,
        entries: [entry('deadline_passed', 'waiting_user.review')],
        snapshot: {},
        deadline: due(1, 1, at(10)),
      });
      expect((await store.dueDeadlines(at(5), 10)).map((d) => d.sessionId)).toEqual(['a']);
      expect(await store.dueDeadlines(at(31), 10)).toEqual([
        { sessionId: 'a', deadline: due(1, 1, at(5)) },
        { sessionId: 'c', deadline: due(1, 1, at(10)) },
        { sessionId: 'later', deadline: due(1, 0, at(20)) },
      ]);
    });

    it('dueDeadlines refuses a limit out of 1–1000 and a `now` that is not an ISO-8601 UTC time (UserError)', async () => {
      for (const limit of [0, -1, 1.5, 1001, Number.NaN]) {
        await expect(store.dueDeadlines('2031-01-01T00:00:00.000Z', limit)).rejects.toThrow(UserError);
        await expect(store.dueDeadlines('2031-01-01T00:00:00.000Z', limit)).rejects.toThrow(/limit must be a whole number from 1 to 1000/);
      }
      for (const now of ['2031-01-01', 'now', '2031-01-01T00:00:00.000+00:00', 42]) {
        await expect(store.dueDeadlines(now as string, 10)).rejects.toThrow(/now must be an ISO-8601 UTC time/);
      }
    });

    it('a journal read past any seq the store holds (2^31, 2^53 − 1) is empty, not a failure', async () => {
      await createSession('s1');
      expect(await store.journal('s1', { afterSeq: 2 ** 31 })).toEqual([]);
      expect(await store.journal('s1', { afterSeq: Number.MAX_SAFE_INTEGER, limit: 1 })).toEqual([]);
    });

    it('keeps sessions apart: revisions, seqs, snapshots and journals are per session', async () => {
      await createSession('a', { who: 'a' });
      await createSession('b', { who: 'b' });
      await store.append({ id: 'a', expectedRevision: 1, entries: [entry('a1', 'x'), entry('a2', 'y')], snapshot: { who: 'a', step: 1 } });
      await store.append({ id: 'b', expectedRevision: 1, entries: [entry('b1', 'z')], snapshot: { who: 'b', step: 1 } });
      await store.append({ id: 'a', expectedRevision: 2, entries: [entry('a3', 'x')], snapshot: { who: 'a', step: 2 } });

      expect((await store.journal('a')).map((e) => [e.seq, e.type])).toEqual([
        [1, 'session.created'],
        [2, 'a1'],
        [3, 'a2'],
        [4, 'a3'],
      ]);
      expect((await store.journal('b')).map((e) => [e.seq, e.type])).toEqual([
        [1, 'session.created'],
        [2, 'b1'],
      ]);
      expect(await store.load('a')).toMatchObject({ revision: 3, snapshot: { who: 'a', step: 2 } });
      expect(await store.load('b')).toMatchObject({ revision: 2, snapshot: { who: 'b', step: 1 } });
      // b's revision is 2 too, but a's write must not have been checked against it.
      await expect(store.append({ id: 'b', expectedRevision: 3, entries: [], snapshot: {} })).rejects.toThrow(ConflictError);
    });

    it('hands out copies: mutating inputs or results never changes what is stored', async () => {
      const snapshot = { context: { items: ['x'] } };
      const first = created('s1');
      await store.create({ id: 's1', packageId: 'pkg', snapshot, entry: first });
      snapshot.context.items.push('mutated');
      (first.payload as { id: string }).id = 'mutated';

      const loaded = await store.load('s1');
      (loaded!.snapshot as typeof snapshot).context.items.push('mutated');
      loaded!.revision = 99;
      expect(await store.load('s1')).toMatchObject({ revision: 1, snapshot: { context: { items: ['x'] } } });
      expect((await store.journal('s1'))[0]?.payload).toEqual({ id: 's1' });

      const payload = { nested: { n: 1 } };
      const appended = entry('a', 'x', payload);
      const next = { context: { items: ['y'] } };
      await store.append({ id: 's1', expectedRevision: 1, entries: [appended], snapshot: next });
      payload.nested.n = 2;
      next.context.items.push('mutated');

      const journal = await store.journal('s1');
      (journal[1]!.payload as typeof payload).nested.n = 3;
      (await store.list()).sessions[0]!.state = 'mutated';

      expect(await store.load('s1')).toMatchObject({ revision: 2, snapshot: { context: { items: ['y'] } } });
      expect((await store.journal('s1')).map((e) => e.payload)).toEqual([{ id: 's1' }, { nested: { n: 1 } }]);
      expect((await store.list()).sessions[0]?.state).toBe('x');
    });
  });
}

// Vitest's default include pattern also matches *.spec.ts and fails a file that defines no
// tests. Only when this file is the one being run (not imported by a backend's test file),
// run the contract on the in-memory store so the file stands on its own.
if (expect.getState().testPath === fileURLToPath(import.meta.url)) {
  describeSessionStore('MemoryStore', async () => {
    const store = new MemoryStore();
    return { store, cleanup: () => store.close() };
  });
}
