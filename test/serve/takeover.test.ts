/**
 * Leases and takeover across servers on one PostgreSQL database (a real server,
 * test/support/postgres.ts), in process: each "server" has its own pool, runtime and
 * SessionHost. A server that stops renewing (its database connection gone) loses its
 * leases; two survivors scanning at once take each running session over exactly once (the
 * model calls are counted); the live library events of a session run by one server reach a
 * stream on another.
 */
import pgDriver from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DemoModel } from '../../src/models/demo-model.js';
import type { Model, ModelRequest } from '../../src/core/models/model.js';
import { createRuntime, type Runtime } from '../../src/runtime/runtime.js';
import { SessionStreamEventSchema } from '../../src/core/machines/stream-events.js';
import type { SessionView } from '../../src/core/view.js';
import { FOLLOW_MS } from '../../src/serve/followers.js';
import { startServe } from '../../src/serve/server.js';
import { SessionHost } from '../../src/serve/session-host.js';
import { PostgresStore } from '../../src/store/postgres-store.js';
import { until } from '../support/cli-process.js';
import { holdLock, postgresUnavailable } from '../support/postgres.js';
import { usePostgres } from '../support/use-postgres.js';
import { asSavedStopped } from '../support/stopped-snapshot.js';
import { fakeClock } from '../support/fake-clock.js';
import type { DeadlinePolicy } from '../../src/core/machines/deadlines.js';
import { client, nextEvent, readEvents } from './http.js';

const pg = usePostgres();

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

/** The demo model, counting its calls. */
function counted(): Model & { calls: number } {
  const demo = new DemoModel();
  const model = {
    label: demo.label,
    calls: 0,
    complete: (request: ModelRequest) => {
      model.calls += 1;
      return demo.complete(request);
    },
  };
  return model;
}

/** A model call that never answers (until the session is stopped): the call in flight when its server dies. */
const hanging: Model = {
  label: 'hangs',
  complete: ({ signal }) => new Promise((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason))),
};

const LEASE_MS = 600;
/**
 * The lease of the server that dies: long enough that a busy machine's late renewal never loses
 * one of its sessions while they are still being started (then it stops renewing altogether).
 */
const DEAD_LEASE_MS = 2_000;
/**
 * The lease of a claim whose takeover fails: long enough that a busy machine cannot let it run
 * out between the failure and the scans that must still find it held.
 */
const FAILED_CLAIM_MS = 3_000;
/**
 * The lease of a server that must keep what it claimed: long, so that a busy machine, which can
 * delay a renewal past a short lease, never hands a claimed session to another server.
 */
const HELD_MS = 60_000;

/** The rows of one statement on a connection of its own. */
async function sql<R extends pgDriver.QueryResultRow>(url: string, text: string, params: unknown[] = []): Promise<R[]> {
  const client = new pgDriver.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text, params)).rows;
  } finally {
    await client.end();
  }
}

/** A new database whose dead server left `count` running sessions, their leases run out by now. */
async function leasesRunOut(count: number) {
  const url = await pg.createDatabase();
  const dead = await deadServer(url, count);
  // Every lease has run out a lease after its last renewal, which came before the close.
  await new Promise((r) => setTimeout(r, DEAD_LEASE_MS + 300));
  return { url, ...dead };
}

/**
 * Another server on the database whose model calls hang (what it claims stays held), closed
 * after the test; `adapt` changes its runtime first (to hold its resumes, say).
 */
function survivorOn(
  url: string,
  owner: string,
  options: { leaseMs?: number; maxRunning?: number; log?: (line: string) => void } = {},
  adapt?: (runtime: Runtime) => void,
) {
  const store = new PostgresStore(url);
  const runtime = createRuntime({ model: hanging, store });
  adapt?.(runtime);
  const host = new SessionHost(runtime, store, {
    leaseMs: options.leaseMs ?? HELD_MS,
    owner,
    maxRunning: options.maxRunning ?? 0,
    ...(options.log ? { log: options.log } : {}),
  });
  cleanups.push(
    () => store.close(),
    () => host.drain(0),
  );
  return { host, store };
}

/**
 * A server that dies with `count` sessions each in its first manager call: the calls are in
 * flight, then its database connection goes (no renewal, no write), so its leases run out.
 * `watch` is another store on the database, for reading what happens next.
 */
async function deadServer(url: string, count: number) {
  const deadStore = new PostgresStore(url);
  const dead = new SessionHost(createRuntime({ model: hanging, store: deadStore }), deadStore, { leaseMs: DEAD_LEASE_MS, owner: 'dead' });
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push((await dead.create({ packageId: 'tiny' })).view.id);
  const sends = ids.map((id) => dead.send(id, { type: 'user_submitted_input', text: `story ${id}` }));
  const watch = new PostgresStore(url);
  cleanups.push(() => watch.close());
  const inFlight = async () => (await watch.list()).sessions.filter((s) => s.state === 'running.manager.thinking').length === count;
  await until(inFlight, `the ${count} calls in flight`);
  await deadStore.close();
  return { ids, sends, watch };
}

describe.skipIf(postgresUnavailable !== null)('leases and takeover on PostgreSQL', () => {
  it('a server that stops renewing loses its leases; two survivors racing take each running session over exactly once', async () => {
    const url = await pg.createDatabase();
    const { ids, sends, watch } = await deadServer(url, 8);

    const survivors = ['B', 'C'].map((owner) => {
      const store = new PostgresStore(url);
      const model = counted();
      const host = new SessionHost(createRuntime({ model, store }), store, { leaseMs: HELD_MS, owner });
      cleanups.push(
        () => store.close(),
        () => host.drain(0),
      );
      return { host, model, claimed: [] as string[] };
    });
    // Before the leases ran out: nothing to take. The dead server renews no more, so its rows
    // say when the first runs out; a scan that ended before then must take nothing. (On a
    // machine too busy to scan that soon, what it took had run out: the race below counts it.)
    const [{ first }] = (await sql<{ first: Date }>(url, 'SELECT min(expires_at) AS first FROM steward.leases')) as [{ first: Date }];
    const early = await survivors[0]!.host.scanOnce();
    const [{ live }] = (await sql<{ live: boolean }>(url, 'SELECT clock_timestamp() < $1 AS live', [first])) as [{ live: boolean }];
    if (live) expect(early).toEqual([]);
    survivors[0]!.claimed.push(...early);
    const killedAt = Date.now();
    // Both scan as fast as they can, at the same time.
    let waiting = 0;
    while (waiting < 8) {
      const claims = await Promise.all(survivors.map((s) => s.host.scanOnce()));
      claims.forEach((ids, i) => survivors[i]!.claimed.push(...ids));
      waiting = (await watch.list()).sessions.filter((s) => s.state === 'waiting_user.approve_step').length;
      if (Date.now() - killedAt > 20_000) throw new Error('the sessions were not taken over');
      await new Promise((r) => setTimeout(r, 20));
    }
    await until(() => survivors.every((s) => s.host.busy === 0), 'the takeovers to end');

    // Each session claimed once, by one of them; each ran the interrupted call again and
    // the next one (the tiny intake takes two manager calls): 16 calls in all, no more.
    expect([...survivors[0]!.claimed, ...survivors[1]!.claimed].sort()).toEqual([...ids].sort());
    expect(survivors[0]!.model.calls + survivors[1]!.model.calls).toBe(16);
    expect(survivors[0]!.model.calls).toBe(2 * survivors[0]!.claimed.length);
    for (const id of ids) {
      const journal = await watch.journal(id);
      expect(journal.map((e) => e.seq)).toEqual(journal.map((_, i) => i + 1));
      expect(journal.map((e) => e.state)).toEqual(['waiting_user.intake', 'running.manager.thinking', 'running.manager.thinking', 'waiting_user.approve_step']);
    }
    // The dead server's sends end (stopped: its lease was lost), never as a success.
    for (const result of await Promise.all(sends)) expect(result.ok).toBe(false);
  }, 60_000);

  it("one takeover tick claims batch after batch while they come back full, but never more than the server's maxRunning", async () => {
    const { url, ids, sends } = await leasesRunOut(8);

    // The survivors' calls hang too, so what a server claimed stays held while it scans on.
    const small = survivorOn(url, 'small', { maxRunning: 5 }).host;
    const first = await small.scanAll(3); // batches of 3, 3 (full, so again), then room for none
    expect(first).toHaveLength(5);
    expect(small.busy).toBe(5);
    expect(await small.scanAll(3)).toEqual([]); // full: it takes nothing more
    const other = survivorOn(url, 'other').host;
    const rest = await other.scanAll(3); // 3 (full, so again), then 2: fewer than a batch, done
    expect([...first, ...rest].sort()).toEqual([...ids].sort());
    for (const result of await Promise.all(sends)) expect(result.ok).toBe(false);
  }, 60_000);

  it('a server claims its next batch only once the last one started here (the others take their share); a tick meanwhile does nothing', async () => {
    const { url, ids, sends } = await leasesRunOut(8);
    // Resuming is held at a gate: the first batch stays claimed but not started.
    let open: () => void = () => {};
    const gate = new Promise<void>((resolve) => (open = resolve));
    const slow = survivorOn(url, 'slow', {}, (runtime) => {
      const resume = runtime.resumeSession.bind(runtime);
      runtime.resumeSession = async (...args) => {
        await gate;
        return resume(...args);
      };
    }).host;
    const other = survivorOn(url, 'other').host;
    // First (cleanups run last to first): a failed assertion must not leave drain waiting at the gate.
    cleanups.push(async () => open());
    const tick = slow.scanAll(3);
    // Claiming opens the pool's first connections: under a busy run far longer than waitFor's default second.
    await vi.waitFor(() => expect(slow.busy).toBe(3), { timeout: 20_000 });
    expect(await slow.scanAll(3)).toEqual([]); // the tick under way is still claiming
    const share = await other.scanOnce(10); // what the slow server has not claimed yet
    expect(share).toHaveLength(5);
    open();
    const mine = await tick; // its next batch found nothing left
    expect(mine).toHaveLength(3);
    expect([...mine, ...share].sort()).toEqual([...ids].sort());
    for (const result of await Promise.all(sends)) expect(result.ok).toBe(false);
  }, 60_000);

  it('a claim that comes back once the server began to drain gives its leases back: another server takes them at once', async () => {
    const { url, ids, sends } = await leasesRunOut(4);
    const { host, store } = survivorOn(url, 'stopping', { leaseMs: 60_000 });
    // The drain begins while the claim is under way.
    const claim = store.leases.claimExpired.bind(store.leases);
    let draining: Promise<unknown> | undefined;
    store.leases.claimExpired = async (...args) => {
      const claimed = await claim(...args);
      draining = host.drain(0);
      return claimed;
    };
    const other = survivorOn(url, 'other', { leaseMs: 60_000 }).host;
    expect(await host.scanOnce(10)).toEqual([]);
    expect(host.busy).toBe(0);
    await draining;
    expect((await other.scanOnce(10)).sort()).toEqual([...ids].sort());
    for (const result of await Promise.all(sends)) expect(result.ok).toBe(false);
  }, 60_000);

  it('a session whose snapshot cannot be resumed is tried again once a lease, not at every scan, and the log names the fix', async () => {
    const { url, ids, sends, watch } = await leasesRunOut(1);
    const id = ids[0]!;
    const stored = await watch.load(id);
    await watch.append({ id, expectedRevision: stored!.revision, entries: [], snapshot: asSavedStopped(stored!.snapshot) });
    // Written without a lease: claimable once it has been quiet a whole lease.
    await new Promise((r) => setTimeout(r, FAILED_CLAIM_MS + 200));
    const logs: string[] = [];
    const { host } = survivorOn(url, 'B', { leaseMs: FAILED_CLAIM_MS, log: (line) => logs.push(line) });
    const other = survivorOn(url, 'C', { leaseMs: FAILED_CLAIM_MS }).host;
    expect(await host.scanOnce()).toEqual([id]);
    await until(() => logs.some((line) => line.includes(`takeover of ${id} failed`)), 'the takeover to fail');
    expect(logs.find((line) => line.includes('failed'))).toContain(`steward fork ${id} --at SEQ`);
    // The failed claim holds until it runs out: neither server claims it again at once.
    expect(await other.scanOnce()).toEqual([]);
    expect(await host.scanOnce()).toEqual([]);
    // Once it has run out (not sooner: see above), the next scan takes it; polled, as a busy
    // machine's scan can come late.
    await new Promise((r) => setTimeout(r, FAILED_CLAIM_MS));
    await until(async () => (await other.scanOnce()).includes(id), 'the other server to claim it once the failed claim ran out');
    for (const result of await Promise.all(sends)) expect(result.ok).toBe(false);
  }, 60_000);

  it('a server whose own renewals run late claims nothing until they come back or the lease is lost here', async () => {
    const { url, ids, sends } = await leasesRunOut(1);
    const logs: string[] = [];
    const { host, store } = survivorOn(url, 'B', { leaseMs: 10_000, log: (line) => logs.push(line) });
    const own = (await host.create({ packageId: 'tiny' })).view.id;
    const running = host.send(own, { type: 'user_submitted_input', text: 'hello' });
    await until(async () => (await store.journal(own)).length === 2, 'its own call in flight');
    // Its own lease's row is locked: its renewals (every third of the lease) wait and none comes back.
    const lock = await holdLock(url, `SELECT 1 FROM steward.leases WHERE session_id = $1 FOR UPDATE`, [own]);
    cleanups.push(lock.release);
    // Late once half a lease went unconfirmed, lost at 0.9 of it: the scan runs in that window
    // (four seconds wide), found by asking the host, not by a sleep a busy machine outlasts.
    await until(() => host.renewsLate, 'its own renewals to be late', 15_000);
    expect(await host.scanAll()).toEqual([]);
    expect(logs.filter((line) => line.includes('takeovers wait'))).toHaveLength(1);
    // Lost here at 0.9 of the lease: its session stopped, the server claims again.
    await until(() => logs.some((line) => line.includes(`lost its lease on session "${own}"`)), 'its own lease to be lost', 15_000);
    expect((await running).ok).toBe(false);
    await lock.release();
    expect(await host.scanAll()).toEqual(ids);
    for (const result of await Promise.all(sends)) expect(result.ok).toBe(false);
  }, 60_000);

  it('graceful shutdown releases the leases: another server takes over at once, not after a whole lease', async () => {
    const url = await pg.createDatabase();
    const storeA = new PostgresStore(url);
    cleanups.push(() => storeA.close());
    const a = new SessionHost(createRuntime({ model: hanging, store: storeA }), storeA, { leaseMs: 60_000, owner: 'A' });
    const id = (await a.create({ packageId: 'tiny' })).view.id;
    const sent = a.send(id, { type: 'user_submitted_input', text: 'hello' });
    await until(async () => (await storeA.load(id)) && (await storeA.journal(id)).length === 2, 'the call in flight');
    expect((await a.drain(0)).handedBack).toEqual([id]);
    expect((await sent).ok).toBe(false);

    const storeB = new PostgresStore(url);
    cleanups.push(() => storeB.close());
    const model = counted();
    const b = new SessionHost(createRuntime({ model, store: storeB }), storeB, { leaseMs: 60_000, owner: 'B' });
    cleanups.push(() => b.drain(0));
    expect(await b.scanOnce()).toEqual([id]);
    await until(() => b.busy === 0, 'the takeover to end');
    expect((await storeB.journal(id)).at(-1)!.state).toBe('waiting_user.approve_step');
    expect(model.calls).toBe(2);
  }, 30_000);

  it('library code on a PostgresStore leases the session it runs: another process is told who runs it; a server never takes it over; the lease is let go at the wait', async () => {
    const url = await pg.createDatabase();
    const storeA = new PostgresStore(url);
    cleanups.push(() => storeA.close());
    let answer: (() => void) | null = null;
    const demo = new DemoModel();
    // Each call waits until the test lets it answer: the session runs as long as the test wants.
    const held: Model = { label: 'held', complete: (request) => new Promise((resolve) => (answer = () => resolve(demo.complete(request)))) };
    const appA = createRuntime({ model: held, store: storeA, leaseOwner: 'billing worker on host-a', leaseMs: LEASE_MS });
    const session = await appA.createSession({ packageId: 'tiny' });
    const sent = session.send({ type: 'user_submitted_input', text: 'hello' });
    await until(() => answer !== null, 'the first call');

    const storeB = new PostgresStore(url);
    cleanups.push(() => storeB.close());
    const appB = createRuntime({ model: counted(), store: storeB, leaseOwner: 'report job on host-b' });
    await expect(appB.resumeSession(session.id)).rejects.toMatchObject({
      code: 'session_running_elsewhere',
      holder: 'billing worker on host-a',
      message: expect.stringMatching(/is held by billing worker on host-a: its lease runs \d+ more seconds?, until \d\d:\d\d:\d\d UTC, unless renewed/),
    });
    // A server scanning for takeovers all along, across several leases, leaves it alone.
    const server = new SessionHost(createRuntime({ model: counted(), store: storeB }), storeB, { leaseMs: LEASE_MS, owner: 'server' });
    cleanups.push(() => server.drain(0));
    for (let i = 0; i < 6; i++) {
      expect(await server.scanOnce()).toEqual([]);
      await new Promise((r) => setTimeout(r, LEASE_MS / 2));
    }
    await expect(server.send(session.id, { type: 'user_submitted_input', text: 'me too' })).rejects.toMatchObject({
      status: 409,
      message: expect.stringContaining('is running in billing worker on host-a. It holds the session'),
    });

    // The calls answer; at the wait the lease is let go, and anyone may send the next event.
    const answering = setInterval(() => answer?.(), 20);
    cleanups.push(async () => clearInterval(answering));
    expect(await sent).toMatchObject({ ok: true, view: { waitingReason: 'approve_step' } });
    await until(async () => (await storeB.leases.holder(session.id)) === null, 'the lease to be let go');
    const other = await appB.resumeSession(session.id);
    expect(await other.send({ type: 'user_approved_next_step' })).toMatchObject({ ok: true });
    // The first object is now behind: its next send is refused before any model call.
    expect(await session.send({ type: 'user_approved_next_step' })).toMatchObject({ ok: false, error: { code: 'conflict' } });
  }, 60_000);

  it('a send takes the lease with the read and gives it up with the write at its wait, in library code and on a server, with a second request on the held session too', async () => {
    const url = await pg.createDatabase();
    const store = new PostgresStore(url);
    cleanups.push(() => store.close());
    const releases = vi.spyOn(store.leases, 'releaseLease');
    // A lease is taken with the session's read (acquireAndLoad): no load after it.
    const loads = vi.spyOn(store, 'load');
    const journalIsGapless = async (id: string) => {
      const seqs = (await store.journal(id)).map((e) => e.seq);
      expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    };

    // Library code (the session's own lease): free once send() resolves, with no release after the write.
    const app = createRuntime({ model: counted(), store, leaseMs: LEASE_MS });
    await expect(app.resumeSession('s-nobody')).rejects.toThrow(/No session "s-nobody"/);
    const session = await app.createSession({ packageId: 'tiny' });
    expect(await session.send({ type: 'user_submitted_input', text: 'hello' })).toMatchObject({ ok: true, view: { waitingReason: 'approve_step' } });
    expect(await store.leases.holder(session.id)).toBeNull();

    // A server, with a second request on the session while its model call runs: the first
    // request's wait keeps the lease (the second still needs it), the second's gives it up.
    let answer: (() => void) | null = null;
    const demo = new DemoModel();
    const held: Model = { label: 'held', complete: (request) => new Promise((resolve) => (answer = () => resolve(demo.complete(request)))) };
    const host = new SessionHost(createRuntime({ model: held, store }), store, { leaseMs: LEASE_MS, owner: 'server' });
    cleanups.push(() => host.drain(0));
    const first = host.send(session.id, { type: 'user_approved_next_step' });
    await until(() => answer !== null, 'the worker call');
    const second = host.send(session.id, { type: 'user_approved_next_step' });
    const answering = setInterval(() => answer?.(), 20);
    cleanups.push(async () => clearInterval(answering));
    expect(await first).toMatchObject({ ok: true });
    const repeated = await second;
    // The same decision again, now for a wait that is gone: refused, never applied to the next.
    expect(repeated.ok || repeated.error.code === 'event_refused' || repeated.error.code === 'wait_closed').toBe(true);
    expect(await store.leases.holder(session.id)).toBeNull();
    await journalIsGapless(session.id);

    // Another process sends at once: nothing holds the session.
    const other = await createRuntime({ model: counted(), store }).resumeSession(session.id);
    expect(await other.send({ type: 'user_submitted_input', text: 'and now?' })).toMatchObject({ ok: expect.any(Boolean) });
    expect(await store.leases.holder(session.id)).toBeNull();
    await journalIsGapless(session.id);
    expect(releases).not.toHaveBeenCalled();
    expect(loads).not.toHaveBeenCalled();
  }, 60_000);

  it('a deadline that came due before a decision passes first without giving the lease up: the decision runs under it, in library code and on a server', async () => {
    const url = await pg.createDatabase();
    const store = new PostgresStore(url);
    cleanups.push(() => store.close());
    const clock = fakeClock();
    const deadlines: DeadlinePolicy = { approve_step: { after: '10m', outcome: 'remind' } };
    const app = createRuntime({ model: counted(), store, clock, deadlines, leaseMs: LEASE_MS });
    const [mine, served] = [await app.createSession({ packageId: 'tiny' }), await app.createSession({ packageId: 'tiny' })];
    for (const session of [mine, served])
      expect(await session.send({ type: 'user_submitted_input', text: 'hello' })).toMatchObject({ ok: true, view: { waitingReason: 'approve_step' } });
    await served.close();
    // Past the due time, before any timer ran: each decision first passes the reminder (the wait stays), then is taken.
    clock.skip(11 * 60_000);
    expect(await mine.send({ type: 'user_approved_next_step' })).toMatchObject({ ok: true, view: { waitingReason: 'review_artifact' } });
    const host = new SessionHost(createRuntime({ model: counted(), store, clock, deadlines }), store, { leaseMs: LEASE_MS, owner: 'server' });
    cleanups.push(() => host.drain(0));
    expect(await host.send(served.id, { type: 'user_approved_next_step' })).toMatchObject({ ok: true, view: { waitingReason: 'review_artifact' } });
    for (const session of [mine, served]) {
      expect((await store.journal(session.id)).map((e) => e.type)).toContain('deadline_passed');
      expect(await store.leases.holder(session.id)).toBeNull();
    }
  }, 60_000);

  it('GET /sessions/:id/stream on one server delivers the live library events of a session another server runs', async () => {
    const url = await pg.createDatabase();
    const servers = await Promise.all(
      [0, 1].map(async () => {
        const store = new PostgresStore(url);
        const handle = await startServe({ runtime: createRuntime({ model: counted(), store }), store, port: 0, leaseMs: 2000, log: () => {} });
        cleanups.push(
          () => store.close(),
          () => handle.close(),
        );
        return { handle, http: client(handle.url) };
      }),
    );
    const [a, b] = servers as [(typeof servers)[0], (typeof servers)[0]];
    const id: string = (await a.http.post('/sessions', { packageId: 'tiny' })).body.view.id;
    const sse = await readEvents(await fetch(`${b.handle.url}/sessions/${id}/stream`));
    cleanups.push(() => sse.stop());
    await expect.poll(() => sse.events.some((e) => e.event === 'entry')).toBe(true);

    // Live events are best effort: a publishes them once it has heard b's notice (a NOTIFY, read
    // on its own connection whenever it comes), and they reach b on another channel than the
    // journal, whose `done` ends the stream. So each run's are waited for (its `waiting`) before
    // the next send, and nothing depends on how soon a NOTIFY arrives: a notice heard late brings
    // the run that just ended, and one a missed (not yet listening) is renewed within FOLLOW_MS / 2.
    const waits = () => sse.events.filter((e) => e.event === 'session' && e.data.type === 'waiting').length;
    let view: SessionView = (await a.http.get(`/sessions/${id}`)).body.view;
    for (let runs = 1; view.phase !== 'done'; runs++) {
      view = (await a.http.post(`/sessions/${id}/events`, nextEvent(view, 'Hello'))).body.view;
      if (view.phase !== 'done') await expect.poll(waits, { timeout: FOLLOW_MS }).toBe(runs);
    }
    await expect.poll(() => sse.events.at(-1)?.event, { timeout: 5000 }).toBe('done');

    const live = sse.events.filter((e) => e.event === 'session').map((e) => SessionStreamEventSchema.parse(e.data));
    const types = new Set(live.map((e) => e.type));
    for (const type of ['round_started', 'round_finished', 'tool_call_checked', 'artifact_published', 'waiting', 'state_entered'])
      expect(types, type).toContain(type);
    expect(live.every((e) => e.sessionId === id)).toBe(true);
    // One session's events arrive in the order they happened: every round finishes after it
    // starts. Live events are best effort and the stream ends at `done` (a journal entry, on
    // another channel), so the last round's `round_finished` may come too late to be seen.
    const rounds = live.filter((e) => e.type === 'round_started' || e.type === 'round_finished').map((e) => `${e.type}:${(e as { round: number }).round}`);
    const inOrder = rounds.map((_, i) => `${i % 2 ? 'round_finished' : 'round_started'}:${Math.floor(i / 2) + 1}`);
    expect(rounds).toEqual(inOrder);
    expect(rounds.length).toBeGreaterThanOrEqual(2);
    // The durable entries are still all there.
    const journal = (await b.http.get(`/sessions/${id}/journal`)).body.entries;
    expect(sse.events.filter((e) => e.event === 'entry').map((e) => e.data)).toEqual(journal);
  }, 60_000);
});
