/**
 * Sessions a server keeps loaded while they wait (src/serve/held-sessions.ts), on a real
 * PostgreSQL server: the next send to one has no statement before its first write (which
 * takes the lease; the write at rest gives it up); a copy another server moved on meanwhile
 * starts over from the store without a lost, doubled or extra model call; a copy whose
 * session runs elsewhere answers 409 and calls nothing; a deadline opened elsewhere fires. On
 * SQLite nothing is kept.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import type { Model } from '../../src/core/models/model.js';
import type { SessionView } from '../../src/core/view.js';
import { DemoModel } from '../../src/models/demo-model.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import type { RuntimeOptions } from '../../src/runtime/runtime-options.js';
import { startServe } from '../../src/serve/server.js';
import { PostgresStore } from '../../src/store/postgres-store.js';
import type { SessionStore } from '../../src/store/session-store.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { postgresUnavailable } from '../support/postgres.js';
import { usePostgres } from '../support/use-postgres.js';
import { fakeClock } from '../support/fake-clock.js';
import { client, nextEvent } from './http.js';

const postgres = usePostgres();
const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The demo model, its calls counted; `gate` holds a call until it resolves. */
function countedModel(counter: { calls: number }, gate: () => Promise<void> = () => Promise.resolve()): Model {
  const demo = new DemoModel();
  return {
    label: demo.label,
    complete: (request) => {
      counter.calls += 1;
      return gate().then(() => demo.complete(request));
    },
  };
}

/** A server on `store` (closed after it) whose runtime calls `model`; `runtime`: the runtime's other options. */
async function serverOn(store: SessionStore, model: Model, options: { keepLoaded?: number; runtime?: Omit<RuntimeOptions, 'model' | 'store'> } = {}) {
  const runtime = createRuntime({ ...options.runtime, model, store });
  const { keepLoaded } = options;
  const handle = await startServe({ runtime, store, port: 0, log: () => {}, ...(keepLoaded === undefined ? {} : { keepLoaded }) });
  cleanups.push(
    () => store.close(),
    () => handle.close(),
  );
  return { handle, http: client(handle.url), runtime };
}

/** A PostgresStore on a pool of ours that records the statements about session `watched.id`. */
function countingStore(url: string, watched: { id: string; statements: string[] }): PostgresStore {
  const pool = new pg.Pool({ connectionString: url, max: 5 });
  const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
  (pool as unknown as { query: (...args: unknown[]) => Promise<unknown> }).query = (...args: unknown[]) => {
    const config = args[0] as { text: string; values?: unknown[] } | string;
    const [text, values] = typeof config === 'string' ? [config, args[1] as unknown[] | undefined] : [config.text, config.values];
    if (values?.[0] === watched.id) watched.statements.push(text);
    return query(...args);
  };
  const store = new PostgresStore(pool);
  cleanups.push(
    () => pool.end(),
    () => store.close(),
  );
  return store;
}

/** What a statement about the session is: a read, acquireAndLoad (FOR SHARE), a write (an UPDATE of its row), or a write that takes the lease (appendAcquiring: FOR UPDATE). */
const leaseAndLoads = (statements: string[]) => statements.filter((s) => s.includes('FOR SHARE')).length;
const grantingWrites = (statements: string[]) => statements.filter((s) => kind(s) === 'granting write').length;
const kind = (statement: string) =>
  statement.includes('FOR SHARE')
    ? 'lease and load'
    : !/UPDATE \S+\.sessions SET revision/.test(statement)
      ? 'read'
      : statement.includes('FOR UPDATE')
        ? 'granting write'
        : 'write';

type Http = ReturnType<typeof client>;

async function sendNext(http: Http, id: string): Promise<{ status: number; view: SessionView; body: { error?: { code: string } } }> {
  const view: SessionView = (await http.get(`/sessions/${id}`)).body.view;
  const answer = await http.post(`/sessions/${id}/events`, nextEvent(view, 'Plan a small garden'));
  return { status: answer.status, view: answer.body.view, body: answer.body };
}

async function journalOf(http: Http, id: string): Promise<Array<{ seq: number; type: string }>> {
  return (await http.get(`/sessions/${id}/journal`)).body.entries;
}

describe.skipIf(postgresUnavailable !== null)('sessions kept loaded, on PostgreSQL', () => {
  it('a send to a session this server kept loaded takes one statement fewer: no lease-and-load, its first write takes the lease', async () => {
    const url = await postgres.createDatabase();
    const counts = { calls: 0 };
    const kept = { id: '', statements: [] as string[] };
    const closed = { id: '', statements: [] as string[] };
    const a = await serverOn(countingStore(url, kept), countedModel(counts));
    const b = await serverOn(countingStore(url, closed), countedModel(counts), { keepLoaded: 0 });

    kept.id = (await a.http.post('/sessions', { packageId: 'tiny' })).body.view.id;
    closed.id = (await b.http.post('/sessions', { packageId: 'tiny' })).body.view.id;
    // The first send loads each session; from the second on, A's is still loaded. Both
    // sessions take the same steps, with as many model rounds (one write each).
    expect((await sendNext(a.http, kept.id)).status).toBe(200);
    expect((await sendNext(b.http, closed.id)).status).toBe(200);
    for (let i = 0; i < 3; i++) {
      kept.statements = [];
      closed.statements = [];
      const [toA, toB] = [await sendNext(a.http, kept.id), await sendNext(b.http, closed.id)];
      expect([toA.status, toB.status]).toEqual([200, 200]);
      expect(toA.view.state).toBe(toB.view.state);
      // Before the model call: one statement (the event's write, taking the lease) against two.
      // How many writes follow depends on the rounds and on which results one write gathers.
      expect(leaseAndLoads(kept.statements)).toBe(0);
      expect(grantingWrites(kept.statements)).toBe(1);
      expect(kept.statements.slice(0, 2).map(kind)).toEqual(['read', 'granting write']);
      expect(leaseAndLoads(closed.statements)).toBe(1);
      expect(grantingWrites(closed.statements)).toBe(0);
      expect(closed.statements.slice(0, 3).map(kind)).toEqual(['read', 'lease and load', 'write']);
    }
    const journal = await journalOf(a.http, kept.id);
    expect(journal.map((e) => e.seq)).toEqual(journal.map((_, i) => i + 1));
    expect(a.handle.host.parked).toBe(1);
    expect(b.handle.host.parked).toBe(0);
  });

  it('a kept copy another server moved on starts over from the store: the send is applied once, with no extra model call or statement', async () => {
    const url = await postgres.createDatabase();
    const counts = { calls: 0 };
    const watched = { id: '', statements: [] as string[] };
    const a = await serverOn(countingStore(url, watched), countedModel(counts));
    const b = await serverOn(new PostgresStore(url), countedModel(counts));
    cleanups.push(() => undefined);
    watched.id = (await a.http.post('/sessions', { packageId: 'tiny' })).body.view.id;
    const id = watched.id;
    expect((await sendNext(a.http, id)).status).toBe(200);
    // B moves the session on; A's copy is now a revision behind.
    expect((await sendNext(b.http, id)).status).toBe(200);
    const before = (await journalOf(a.http, id)).length;

    // The same step through A, and through a server that keeps nothing, for the reference count of model calls.
    const callsBefore = counts.calls;
    watched.statements = [];
    const sent = await sendNext(a.http, id);
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    // The refused write leased and read the session: no statement more than a send to a session not kept.
    expect(leaseAndLoads(watched.statements)).toBe(0);
    expect(grantingWrites(watched.statements)).toBe(1);
    const journal = await journalOf(a.http, id);
    expect(journal.map((e) => e.seq)).toEqual(journal.map((_, i) => i + 1));
    expect(journal.length).toBeGreaterThan(before);
    const callsThroughA = counts.calls - callsBefore;

    // The reference: B, with its own current copy, takes the same kind of step.
    const reference = await serverOn(new PostgresStore(url), countedModel(counts), { keepLoaded: 0 });
    const other: string = (await reference.http.post('/sessions', { packageId: 'tiny' })).body.view.id;
    for (let i = 0; i < 2; i++) await sendNext(reference.http, other);
    const referenceBefore = counts.calls;
    await sendNext(reference.http, other);
    expect(callsThroughA).toBe(counts.calls - referenceBefore);
  });

  it('an async send (202) to a kept copy another server moved on is accepted once, for the session as stored', async () => {
    const url = await postgres.createDatabase();
    const counts = { calls: 0 };
    const a = await serverOn(new PostgresStore(url), countedModel(counts));
    const b = await serverOn(new PostgresStore(url), countedModel(counts));
    const id: string = (await a.http.post('/sessions', { packageId: 'tiny' })).body.view.id;
    expect((await sendNext(a.http, id)).status).toBe(200);
    // B moves the store on without moving the state: a refused event is journalled too. A's
    // copy, a revision behind, takes the next event as the store would, until its write.
    const refusedOnB = await b.http.post(`/sessions/${id}/events`, { type: 'user_accepted_artifact', artifactId: 'none' });
    expect(refusedOnB.status).toBe(409);
    const read = (await a.http.get(`/sessions/${id}`)).body as { view: SessionView; revision: number };
    const stored = read.view;
    const before = (await journalOf(a.http, id)).length;
    const accepted = await a.http.post(`/sessions/${id}/events`, nextEvent(stored, 'x'), { prefer: 'respond-async' });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
    // The revision it answers with is the store's after the event's write, not the stale copy's.
    expect(accepted.body.revision).toBeGreaterThan(read.revision);
    await expect.poll(async () => (await a.http.get(`/sessions/${id}`)).body.view.phase, { timeout: 10_000 }).not.toBe('running');
    const journal = await journalOf(a.http, id);
    expect(journal.map((e) => e.seq)).toEqual(journal.map((_, i) => i + 1));
    expect(journal.slice(before).filter((e) => e.type.startsWith('user_'))).toHaveLength(1);
  });

  it('a kept copy of a session running on another server answers 409 and calls no model; the run there ends as if alone', async () => {
    const url = await postgres.createDatabase();
    const counts = { calls: 0 };
    const countsB = { calls: 0 };
    let open: () => void = () => {};
    let holdB = false;
    const gate = () => (holdB ? new Promise<void>((resolve) => (open = resolve)) : Promise.resolve());
    const a = await serverOn(new PostgresStore(url), countedModel(counts));
    const b = await serverOn(new PostgresStore(url), countedModel(countsB, gate));
    const id: string = (await a.http.post('/sessions', { packageId: 'tiny' })).body.view.id;
    expect((await sendNext(a.http, id)).status).toBe(200);
    expect(a.handle.host.parked).toBe(1);

    holdB = true;
    const view: SessionView = (await a.http.get(`/sessions/${id}`)).body.view;
    const onB = b.http.post(`/sessions/${id}/events`, nextEvent(view, 'x'));
    await expect.poll(() => countsB.calls).toBeGreaterThan(0);
    const callsA = counts.calls;
    const onA = await a.http.post(`/sessions/${id}/events`, nextEvent(view, 'x'));
    expect(onA.status).toBe(409);
    expect(onA.body.error.code).toBe('session_running_elsewhere');
    expect(counts.calls).toBe(callsA);
    holdB = false;
    open();
    expect((await onB).status).toBe(200);
    const journal = await journalOf(a.http, id);
    expect(journal.map((e) => e.seq)).toEqual(journal.map((_, i) => i + 1));
    // A's next send, on the session as B left it.
    expect((await sendNext(a.http, id)).status).toBe(200);
  });
});

describe.skipIf(postgresUnavailable !== null)('sessions kept loaded: outside a hold', () => {
  it('a kept copy used outside a hold (a timer after the hold ended, say) writes nothing: no grant fences it', async () => {
    const url = await postgres.createDatabase();
    const store = new PostgresStore(url);
    const a = await serverOn(store, countedModel({ calls: 0 }));
    const id: string = (await a.http.post('/sessions', { packageId: 'tiny' })).body.view.id;
    expect((await sendNext(a.http, id)).status).toBe(200);
    expect(a.handle.host.parked).toBe(1);
    const copy = a.runtime.live.get(id)!;
    const before = (await store.load(id))!.revision;
    const view: SessionView = (await a.http.get(`/sessions/${id}`)).body.view;
    const result = await copy.send(nextEvent(view, 'x'));
    expect(result.ok).toBe(false);
    expect((await store.load(id))!.revision).toBe(before);
    // The server's next send replaces the stopped copy.
    expect((await sendNext(a.http, id)).status).toBe(200);
    expect((await store.load(id))!.revision).toBeGreaterThan(before);
  });
});

describe.skipIf(postgresUnavailable !== null)('sessions kept loaded: deadlines', () => {
  it('a deadline opened elsewhere since this server kept its copy fires through the session as stored', async () => {
    const url = await postgres.createDatabase();
    const deadlines = { review_artifact: { after: '1h', outcome: 'reject' as const } };
    const clockA = fakeClock();
    const a = await serverOn(new PostgresStore(url), new DemoModel(), { runtime: { clock: clockA, deadlines } });
    const b = await serverOn(new PostgresStore(url), new DemoModel(), { runtime: { clock: fakeClock(), deadlines } });
    const id: string = (await a.http.post('/sessions', { packageId: 'tiny' })).body.view.id;
    // A keeps the session at the approval (no deadline there); B approves, and the review opens with one.
    let view = (await sendNext(a.http, id)).view;
    while (view.waitingReason !== 'approve_step') view = (await sendNext(a.http, id)).view;
    expect(a.handle.host.parked).toBe(1);
    view = (await sendNext(b.http, id)).view;
    expect(view).toMatchObject({ waitingReason: 'review_artifact', deadline: { outcome: 'reject' } });

    // An hour on, A's scan finds it due: its copy knows no such deadline, so it fires it on the session as stored.
    clockA.skip(3_600_000);
    expect(await a.handle.host.fireDueDeadlines()).toEqual([id]);
    await expect.poll(async () => (await journalOf(a.http, id)).filter((e) => e.type === 'deadline_passed').length).toBe(1);
  });
});

describe('sessions kept loaded, on SQLite', () => {
  it('a server on SQLite keeps nothing loaded: two processes on one file each send on the session as stored', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'steward-kept-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'steward.db');
    const counts = { calls: 0 };
    const a = await serverOn(new SqliteStore(file), countedModel(counts));
    const b = await serverOn(new SqliteStore(file), countedModel(counts));
    const id: string = (await a.http.post('/sessions', { packageId: 'tiny' })).body.view.id;
    expect((await sendNext(a.http, id)).status).toBe(200);
    expect(a.handle.host.parked).toBe(0);
    expect((await sendNext(b.http, id)).status).toBe(200);
    const sent = await sendNext(a.http, id);
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const journal = await journalOf(a.http, id);
    expect(journal.map((e) => e.seq)).toEqual(journal.map((_, i) => i + 1));
    expect(journal.filter((e) => e.type.startsWith('user_')).length).toBe(3);
  });
});
