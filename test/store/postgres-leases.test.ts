/**
 * Leases on PostgresStore (a real server, test/support/postgres.ts): acquire, renew, expiry,
 * release, the fence on append (an expired holder commits nothing; the revision check stays
 * the second fence), the takeover claim (FOR UPDATE SKIP LOCKED: two stores racing claim
 * each expired session once), the migration from schema version 1, and the event bus.
 * Every store here has its own pool, as another server would.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConflictError, LeaseLostError, SessionNotFoundError } from '../../src/core/errors.js';
import { thisProcess } from '../../src/store/holder-process.js';
import { LeaseKeeper } from '../../src/store/lease-keeper.js';
import { PgEventBus } from '../../src/store/postgres-events.js';
import { PG_SCHEMA_VERSION, PostgresStore } from '../../src/store/postgres-store.js';
import type { Lease } from '../../src/store/session-store.js';
import { holdLock, postgresUnavailable } from '../support/postgres.js';
import { until } from '../support/cli-process.js';
import { usePostgres } from '../support/use-postgres.js';
import { entry } from './session-store.spec.js';

const server = usePostgres();
let url = '';
const open: PostgresStore[] = [];
beforeAll(async () => {
  if (postgresUnavailable) return;
  url = await server.createDatabase();
}, 60_000);
// Runs before usePostgres()'s stop (after-hooks run in reverse order).
afterAll(async () => {
  await Promise.all(open.map((s) => s.close()));
}, 60_000);

const freshSchema = () => `t_${randomBytes(5).toString('hex')}`;
const connect = (schema: string) => {
  const store = new PostgresStore(url, { schema });
  open.push(store);
  return store;
};
const created = (state = 'idle') => ({ kind: 'created', type: 'session.created', payload: {}, state }) as const;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** How many connections to the test database wait on a lock now. */
async function waitingOnLocks(): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
    );
    return rows[0]!.n;
  } finally {
    await client.end();
  }
}

describe.skipIf(postgresUnavailable !== null)('PostgresStore leases', () => {
  it('acquire: one owner at a time, a new token per grant; renew extends only the own grant; expiry and release free it', async () => {
    const schema = freshSchema();
    const [a, b] = [connect(schema), connect(schema)];
    await a.create({ id: 's', packageId: null, snapshot: {}, entry: created() });

    // Granted for a second, renewed at once for a minute: still A's once the first grant's
    // second is over. (Only the renewal has to come within that second; waits past a length are
    // safe on a busy machine, a renewal that must land before one is not.)
    const first = await a.leases.acquireLease('s', 'A', 1_000);
    expect(first).toEqual({ sessionId: 's', owner: 'A', token: 1 });
    expect(await a.leases.renewLease(first!, 60_000)).toBe(true);
    expect(await b.leases.acquireLease('s', 'B', 300)).toBeNull();
    await sleep(1_100);
    expect(await b.leases.acquireLease('s', 'B', 300)).toBeNull();
    expect(await a.leases.renewLease(first!, 300)).toBe(true);

    // Not renewed: it expires, B gets it with the next token, A's renewal fails.
    await sleep(400);
    const second = await b.leases.acquireLease('s', 'B', 5000);
    expect(second).toEqual({ sessionId: 's', owner: 'B', token: 2 });
    expect(await a.leases.renewLease(first!, 300)).toBe(false);
    expect(await b.leases.renewLease({ ...second!, token: 1 }, 300)).toBe(false);

    // Released: free at once (a 5 s lease, taken again right away).
    await b.leases.releaseLease(second!);
    expect(await b.leases.renewLease(second!, 300)).toBe(false);
    expect(await a.leases.acquireLease('s', 'A', 300)).toEqual({ sessionId: 's', owner: 'A', token: 3 });

    await expect(a.leases.acquireLease('missing', 'A', 300)).rejects.toThrow(SessionNotFoundError);
  });

  it('renewals: many at once, each told whether its own grant was renewed; they do not wait behind a full pool', async () => {
    const schema = freshSchema();
    const store = new PostgresStore(url, { schema, poolSize: 3 });
    open.push(store);
    const ids = Array.from({ length: 30 }, (_, i) => `r${i}`);
    for (const id of ids) await store.create({ id, packageId: null, snapshot: {}, entry: created() });
    const leases = await Promise.all(ids.map((id) => store.leases.acquireLease(id, 'A', 60_000)));
    // Every pooled connection waits on a lock, and more reads queue in the pool behind them.
    const lock = await holdLock(url, `LOCK TABLE "${schema}".sessions IN ACCESS EXCLUSIVE MODE`);
    try {
      const reads = Array.from({ length: 6 }, () => store.load('r0'));
      await until(async () => (await waitingOnLocks()) >= 3, "the pool's three connections to wait on the lock");
      const renewals = [...leases.map((lease) => store.leases.renewLease(lease!, 60_000)), store.leases.renewLease({ ...leases[0]!, token: 99 }, 60_000)];
      // Behind the pool they would never come back while the lock is held: any bound tells.
      const renewed = await Promise.race([Promise.all(renewals), sleep(15_000).then(() => 'waited behind the pool' as const)]);
      expect(renewed).toEqual([...ids.map(() => true), false]);
      await lock.release();
      expect((await Promise.all(reads)).every((read) => read?.id === 'r0')).toBe(true);
    } finally {
      await lock.release();
    }
  });

  it('renewals asked for one after another, each as soon as the last is answered, all come back', async () => {
    const store = connect(freshSchema());
    await store.create({ id: 'n', packageId: null, snapshot: {}, entry: created() });
    const lease = (await store.leases.acquireLease('n', 'A', 60_000))!;
    for (let i = 0; i < 5; i++) expect(await store.leases.renewLease(lease, 60_000)).toBe(true);
  });

  it('a renewal that does not come back: the lease ends here before the database could let another server claim it, and the gate before a model call stops waiting', async () => {
    const schema = freshSchema();
    const store = connect(schema);
    await store.create({ id: 'k', packageId: null, snapshot: {}, entry: created() });
    const leaseMs = 2_000;
    const askedAt = performance.now();
    const lease = await store.leases.acquireLease('k', 'A', leaseMs);
    let lostAt = 0;
    // The keeper's renewals, as they are sent: their answers can be awaited.
    const renewals: Promise<boolean>[] = [];
    const leases: typeof store.leases = Object.create(store.leases, {
      renewLease: { value: (...args: Parameters<typeof store.leases.renewLease>) => renewals[renewals.push(store.leases.renewLease(...args)) - 1]! },
    });
    const keeper = new LeaseKeeper(
      leases,
      lease!,
      leaseMs,
      () => (lostAt = performance.now()),
      () => {},
      askedAt,
    );
    // The lease's row is locked: every renewal waits on it and none comes back.
    const lock = await holdLock(url, `SELECT 1 FROM "${schema}".leases WHERE session_id = 'k' FOR UPDATE`);
    try {
      // Over half a lease unconfirmed, the gate before a model call renews first, and waits.
      await sleep(askedAt + leaseMs * 0.6 - performance.now());
      const gate = keeper.ensureHeld();
      const deadline = performance.now() + 3 * leaseMs;
      while (lostAt === 0 && performance.now() < deadline) await sleep(10);
      expect(lostAt, 'lost while its renewal still waits').toBeGreaterThan(0);
      expect(keeper.isHeld()).toBe(false);
      // Lost here while the database still held it for this grant: nobody could claim it yet.
      // Measured back to the moment it was lost (this query may come late on a busy machine):
      // what the grant had left now, plus the time since it was lost here, is above zero.
      const askedNow = performance.now();
      const { rows } = await lock.client.query<{ leftMs: number }>(
        `SELECT EXTRACT(EPOCH FROM expires_at - clock_timestamp()) * 1000 AS "leftMs" FROM "${schema}".leases WHERE session_id = 'k'`,
      );
      expect(Number(rows[0]!.leftMs) + (askedNow - lostAt)).toBeGreaterThan(0);
      // The gate answers once the lease ended here, not when the renewal comes back (it never
      // does while the row is locked: any bound tells).
      expect(await Promise.race([gate, sleep(10_000).then(() => 'still waiting for the renewal')])).toBe(false);
      await lock.release();
      // The late renewal's answer does not bring it back.
      await Promise.allSettled(renewals);
      expect(keeper.isHeld()).toBe(false);
    } finally {
      keeper.abandon();
      await lock.release();
    }
  });

  it('acquireAndLoad: the lease and the session in one statement; a write the last holder made meanwhile is read as written', async () => {
    const schema = freshSchema();
    const [a, b] = [connect(schema), connect(schema)];
    await a.create({ id: 'l', packageId: 'pkg', snapshot: { n: 1 }, entry: created() });

    const first = await a.leases.acquireAndLoad('l', 'A', 5000);
    expect(first).toMatchObject({ lease: { sessionId: 'l', owner: 'A', token: 1 }, stored: { id: 'l', packageId: 'pkg', revision: 1, snapshot: { n: 1 } } });
    const refused = await b.leases.acquireAndLoad('l', 'B', 5000);
    expect(refused).toMatchObject({ lease: null, stored: { revision: 1 }, holder: { owner: 'A' } });
    expect(refused.holder!.expiresInMs).toBeGreaterThan(3000);
    expect(await b.leases.acquireAndLoad('missing', 'B', 5000)).toEqual({ stored: undefined, lease: null, holder: null });

    // A write to the session is under way when B asks: B's read waits for it and sees it.
    const raw = new pg.Client({ connectionString: url });
    await raw.connect();
    try {
      await raw.query('BEGIN');
      await raw.query(`UPDATE ${schema}.sessions SET revision = 2, snapshot = '{"n":2}' WHERE id = 'l'`);
      const asked = b.leases.acquireAndLoad('l', 'B', 5000);
      await until(async () => (await waitingOnLocks()) >= 1, "B's read to wait for the write");
      await raw.query('COMMIT');
      expect(await asked).toMatchObject({ lease: null, holder: { owner: 'A' }, stored: { revision: 2, snapshot: { n: 2 } } });
    } finally {
      await raw.end();
    }
    // Released: the next grant, with the session as A left it.
    await a.leases.releaseLease(first.lease!);
    expect(await b.leases.acquireAndLoad('l', 'B', 5000)).toMatchObject({ lease: { owner: 'B', token: 2 }, stored: { revision: 2, snapshot: { n: 2 } } });
  });

  it('the fence: an expired or superseded holder commits nothing (LeaseLostError); a write without the lease is refused while it is held; the revision check stays', async () => {
    const schema = freshSchema();
    const [a, b] = [connect(schema), connect(schema)];
    await a.create({ id: 'f', packageId: null, snapshot: { n: 0 }, entry: created() });
    // Long enough for what must happen while A holds it, however busy the machine.
    const lease = (await a.leases.acquireLease('f', 'A', 60_000))!;
    expect(await a.append({ id: 'f', expectedRevision: 1, entries: [entry('e1', 'running')], snapshot: { n: 1 }, lease })).toBe(2);

    // Someone without the lease (another process, the CLI) cannot write while A holds it.
    await expect(b.append({ id: 'f', expectedRevision: 2, entries: [entry('intruder', 'x')], snapshot: { n: 'intruder' } })).rejects.toThrow(ConflictError);
    await expect(b.append({ id: 'f', expectedRevision: 2, entries: [entry('intruder', 'x')], snapshot: { n: 'intruder' } })).rejects.toThrow(
      /leased by another server \(A\)/,
    );
    // The revision check is still there for the holder.
    await expect(a.append({ id: 'f', expectedRevision: 1, entries: [entry('stale', 'x')], snapshot: { n: 'stale' }, lease })).rejects.toThrow(ConflictError);

    // A pauses past its lease (a "zombie"; its last renewal asked for little): its write is
    // refused even though nobody took over yet.
    expect(await a.leases.renewLease(lease, 200)).toBe(true);
    await sleep(300);
    await expect(a.append({ id: 'f', expectedRevision: 2, entries: [entry('zombie', 'x')], snapshot: { n: 'zombie' }, lease })).rejects.toThrow(LeaseLostError);
    // B takes over; A's old token can never write again, B's can.
    const taken = (await b.leases.acquireLease('f', 'B', 5000))!;
    await expect(a.append({ id: 'f', expectedRevision: 2, entries: [entry('zombie', 'x')], snapshot: { n: 'zombie' }, lease })).rejects.toThrow(LeaseLostError);
    expect(await b.append({ id: 'f', expectedRevision: 2, entries: [entry('e2', 'waiting')], snapshot: { n: 2 }, lease: taken })).toBe(3);

    const journal = await a.journal('f');
    expect(journal.map((e) => [e.seq, e.type])).toEqual([
      [1, 'session.created'],
      [2, 'e1'],
      [3, 'e2'],
    ]);
    expect((await a.load('f'))!.snapshot).toEqual({ n: 2 });
    // Released: unfenced writes go through again.
    await b.leases.releaseLease(taken);
    expect(await a.append({ id: 'f', expectedRevision: 3, entries: [entry('e3', 'waiting')], snapshot: { n: 3 } })).toBe(4);
  });

  it('a write can give its lease up in the same statement: committed, the lease is free at once; refused, it gives nothing up', async () => {
    const schema = freshSchema();
    const [a, b] = [connect(schema), connect(schema)];
    await a.create({ id: 'g', packageId: null, snapshot: { n: 0 }, entry: created() });
    const lease = (await a.leases.acquireLease('g', 'A', 60_000))!;
    // A refused write (a stale revision) keeps the lease: its holder still runs the session.
    await expect(
      a.append({ id: 'g', expectedRevision: 0, entries: [entry('stale', 'waiting')], snapshot: { n: 'stale' }, lease, releaseLease: true }),
    ).rejects.toThrow(ConflictError);
    expect((await b.leases.holder('g'))?.owner).toBe('A');
    // Without a lease the flag asks nothing: the write is refused while A holds it, and A keeps it.
    await expect(
      b.append({ id: 'g', expectedRevision: 1, entries: [entry('intruder', 'x')], snapshot: { n: 'intruder' }, releaseLease: true }),
    ).rejects.toThrow(ConflictError);
    expect((await b.leases.holder('g'))?.owner).toBe('A');

    expect(await a.append({ id: 'g', expectedRevision: 1, entries: [entry('e1', 'waiting')], snapshot: { n: 1 }, lease, releaseLease: true })).toBe(2);
    expect(await b.leases.holder('g')).toBeNull();
    // Given up: the old grant writes nothing more, and anyone takes the session at once.
    await expect(a.append({ id: 'g', expectedRevision: 2, entries: [entry('late', 'x')], snapshot: { n: 'late' }, lease })).rejects.toThrow(LeaseLostError);
    const taken = (await b.leases.acquireLease('g', 'B', 5000))!;
    expect(await b.append({ id: 'g', expectedRevision: 2, entries: [entry('e2', 'waiting')], snapshot: { n: 2 }, lease: taken })).toBe(3);
    expect((await a.journal('g')).map((e) => [e.seq, e.type])).toEqual([
      [1, 'session.created'],
      [2, 'e1'],
      [3, 'e2'],
    ]);
  });

  it('appendAcquiring: the write that starts a run takes the lease in its own statement; a stale revision or a held lease writes nothing and answers as acquireAndLoad', async () => {
    const schema = freshSchema();
    const [a, b] = [connect(schema), connect(schema)];
    await a.create({ id: 'w', packageId: 'pkg', snapshot: { n: 0 }, entry: created('waiting') });
    const write = (revision: number, type: string, state = 'running') => ({
      id: 'w',
      expectedRevision: revision,
      entries: [entry(type, state)],
      snapshot: { n: type },
      durable: false,
    });

    // Free and current: written, and leased to A (its writes are fenced by that grant).
    const first = await a.leases.appendAcquiring(write(1, 'e1'), 'A', 60_000);
    expect(first).toEqual({ revision: 2, lease: { sessionId: 'w', owner: 'A', token: 1 } });
    expect((await b.leases.holder('w'))?.owner).toBe('A');
    await expect(b.append(write(2, 'intruder'))).rejects.toThrow(ConflictError);

    // Held by A: B's granting write is not made; it is told who holds the lease, and the session as stored.
    const held = await b.leases.appendAcquiring(write(2, 'b1'), 'B', 60_000);
    expect(held).toMatchObject({ stale: { lease: null, holder: { owner: 'A', token: 1 }, stored: { revision: 2, snapshot: { n: 'e1' } } } });

    // A ends its run and gives the lease up with its write; B's object is one revision behind:
    // nothing is written, and B gets the lease with the session as stored now, to start over from.
    expect(await a.append({ ...write(2, 'e2', 'waiting'), lease: first.lease!, releaseLease: true, durable: true })).toBe(3);
    const stale = await b.leases.appendAcquiring(write(2, 'b1'), 'B', 60_000);
    expect(stale).toMatchObject({ stale: { lease: { sessionId: 'w', owner: 'B', token: 2 }, stored: { revision: 3, snapshot: { n: 'e2' } } } });
    // That grant fences B's writes as acquireAndLoad's does; A's old grant writes nothing.
    await expect(a.append({ ...write(3, 'late'), lease: first.lease! })).rejects.toThrow(LeaseLostError);
    expect(await b.append({ ...write(3, 'b1'), lease: stale.stale!.lease! })).toBe(4);
    await b.leases.releaseLease(stale.stale!.lease!);

    // Free and current again: the next granting write takes a new token.
    expect(await a.leases.appendAcquiring(write(4, 'e3'), 'A', 60_000)).toEqual({ revision: 5, lease: { sessionId: 'w', owner: 'A', token: 3 } });
    await expect(a.leases.appendAcquiring({ ...write(1, 'x'), id: 'missing' }, 'A', 60_000)).rejects.toThrow(SessionNotFoundError);
    expect((await a.journal('w')).map((e) => [e.seq, e.type])).toEqual([
      [1, 'session.created'],
      [2, 'e1'],
      [3, 'e2'],
      [4, 'b1'],
      [5, 'e3'],
    ]);
  });

  it('appendAcquiring at rest (releaseLease): made, the grant is given up in the same statement; not made, the grant stands for the writer to start over with', async () => {
    const schema = freshSchema();
    const [a, b] = [connect(schema), connect(schema)];
    await a.create({ id: 'r', packageId: null, snapshot: { n: 0 }, entry: created('waiting') });
    const atRest = (revision: number, type: string) => ({
      id: 'r',
      expectedRevision: revision,
      entries: [entry(type, 'waiting')],
      snapshot: { n: type },
      releaseLease: true,
    });
    // Made: written, and nobody holds the lease after it, so any server may send the next event.
    const made = await a.leases.appendAcquiring(atRest(1, 'refused'), 'A', 60_000);
    expect(made).toMatchObject({ revision: 2, lease: { owner: 'A' } });
    expect(await b.leases.holder('r')).toBeNull();
    expect(await b.append(atRest(2, 'unleased'))).toBe(3);
    // Not made (a revision behind): B gets the lease for as long as it asked, with the session as stored.
    const stale = await b.leases.appendAcquiring(atRest(2, 'behind'), 'B', 60_000);
    expect(stale).toMatchObject({ stale: { lease: { owner: 'B' }, stored: { revision: 3 } } });
    const holder = await a.leases.holder('r');
    expect(holder?.owner).toBe('B');
    expect(holder!.expiresInMs).toBeGreaterThan(30_000);
    expect((await a.journal('r')).map((e) => e.type)).toEqual(['session.created', 'refused', 'unleased']);
  });

  it('the deadline is fenced like the write it rides with: a lost lease or an unleased write while another holds it changes nothing; a grant and a claim read it', async () => {
    const schema = freshSchema();
    const [a, b] = [connect(schema), connect(schema)];
    const first = { wait: 1, level: 0, dueAt: '2031-01-01T00:00:00.000Z' };
    await a.create({ id: 'd', packageId: null, snapshot: {}, entry: created('waiting_user.review'), deadline: first });
    const lease = (await a.leases.acquireLease('d', 'A', 60_000))!;
    const escalated = { wait: 1, level: 1, dueAt: '2031-01-02T00:00:00.000Z' };
    expect(
      await a.append({ id: 'd', expectedRevision: 1, entries: [entry('deadline_passed', 'waiting_user.review')], snapshot: {}, lease, deadline: escalated }),
    ).toBe(2);
    // Without the lease while A holds it: refused, the deadline stays.
    await expect(b.append({ id: 'd', expectedRevision: 2, entries: [entry('x', 'running')], snapshot: {}, deadline: null })).rejects.toThrow(ConflictError);
    await a.leases.releaseLease(lease);
    // B takes it (the grant reads the deadline); A's old grant writes nothing, neither a clear nor a new time.
    const taken = await b.leases.acquireAndLoad('d', 'B', 60_000);
    expect(taken).toMatchObject({ lease: { owner: 'B' }, stored: { revision: 2, deadline: escalated } });
    for (const deadline of [null, { wait: 9, level: 0, dueAt: '2030-01-01T00:00:00.000Z' }]) {
      await expect(a.append({ id: 'd', expectedRevision: 2, entries: [entry('zombie', 'x')], snapshot: {}, lease, deadline })).rejects.toThrow(LeaseLostError);
    }
    expect((await a.load('d'))!.deadline).toEqual(escalated);
    expect(await a.dueDeadlines('2031-06-01T00:00:00.000Z', 10)).toEqual([{ sessionId: 'd', deadline: escalated }]);

    // A claimed session comes with its deadline (a running session may keep one, e.g. set before a tool call ran).
    await b.append({ id: 'd', expectedRevision: 2, entries: [entry('go', 'running.worker.thinking')], snapshot: {}, lease: taken.lease! });
    await b.leases.releaseLease(taken.lease!);
    expect(await a.leases.claimExpired('C', 60_000, 10)).toMatchObject([{ sessionId: 'd', stored: { revision: 3, deadline: escalated } }]);
  });

  it('claimExpired: two stores racing claim each expired running session exactly once; live leases and waiting sessions are never claimed', async () => {
    const schema = freshSchema();
    const [dead, b, c] = [connect(schema), connect(schema), connect(schema)];
    const ids = Array.from({ length: 20 }, (_, i) => `run${i}`);
    const deadLeases: Lease[] = [];
    for (const id of ids) {
      await dead.create({ id, packageId: null, snapshot: {}, entry: created() });
      // Long enough that none runs out while the others are set up, however busy the machine.
      const lease = (await dead.leases.acquireLease(id, 'dead', 60_000))!;
      await dead.append({ id, expectedRevision: 1, entries: [entry('go', 'running.manager.thinking')], snapshot: {}, lease });
      deadLeases.push(lease);
    }
    await dead.create({ id: 'waiting', packageId: null, snapshot: {}, entry: created('waiting_user.input') });
    await dead.create({ id: 'alive', packageId: null, snapshot: {}, entry: created() });
    const alive = (await dead.leases.acquireLease('alive', 'alive', 60_000))!;
    await dead.append({ id: 'alive', expectedRevision: 1, entries: [entry('go', 'running.worker.thinking')], snapshot: {}, lease: alive });
    // Running, never leased (a process without leases), written just now: not yet.
    await dead.create({ id: 'fresh', packageId: null, snapshot: {}, entry: created('running.manager.thinking') });

    expect(await b.leases.claimExpired('B', 60_000, 50)).toEqual([]);
    // The dead holder's last renewals asked for little, and it renews no more: they run out.
    expect(await Promise.all(deadLeases.map((lease) => dead.leases.renewLease(lease, 100)))).toEqual(deadLeases.map(() => true));
    await sleep(200);
    const claims = await Promise.all([b, c, b, c].map((store, i) => store.leases.claimExpired(i % 2 ? 'C' : 'B', 60_000, 50)));
    const claimed = claims
      .flat()
      .map((l) => l.sessionId)
      .sort();
    expect(claimed).toEqual([...ids].sort());
    for (const lease of claims.flat()) expect(lease.token).toBe(2);
    // Each comes with its session as the claim locked it: the claimer reads nothing more.
    for (const lease of claims.flat()) expect(lease.stored).toEqual(await b.load(lease.sessionId));
    // Claimed leases are live: nothing is claimed twice.
    expect(await c.leases.claimExpired('C', 60_000, 50)).toEqual([]);

    // The never-leased running session once it has been quiet for a whole lease.
    await sleep(1_100);
    const late = await c.leases.claimExpired('C', 60_000, 50);
    expect(late).toEqual([]);
    const quiet = (await c.leases.claimExpired('C', 1000, 50)).map((l) => l.sessionId);
    expect(quiet).toContain('fresh');
    expect(quiet).not.toContain('waiting');
    expect(quiet).not.toContain('alive');
  });

  it(
    'claimExpired never takes a session last written without a lease (a runner that takes none) before ' +
      'it was quiet a whole lease, though a lease row exists; an unused grant leaves it so; holder names ' +
      'who holds a lease',
    async () => {
      const schema = freshSchema();
      const [server, writer, other] = [connect(schema), connect(schema), connect(schema)];
      await server.create({ id: 'u', packageId: null, snapshot: {}, entry: created('waiting_user.intake') });
      // An earlier event through a server: leased, written, released (the row stays, expired).
      const earlier = (await server.leases.acquireLease('u', 'steward serve on a pid 1', 60_000))!;
      expect(await other.leases.holder('u')).toEqual({
        owner: 'steward serve on a pid 1',
        expiresInMs: expect.any(Number),
        token: 1,
        process: thisProcess(),
      });
      expect((await other.leases.holder('u'))!.expiresInMs).toBeGreaterThan(50_000);
      await server.append({ id: 'u', expectedRevision: 1, entries: [entry('e', 'waiting_user.approve_step')], snapshot: {}, lease: earlier });
      await server.leases.releaseLease(earlier);
      expect(await other.leases.holder('u')).toBeNull();
      // Then a process that takes no lease runs it: unfenced, allowed while nobody holds one.
      await writer.append({ id: 'u', expectedRevision: 2, entries: [entry('approve', 'running.worker.thinking')], snapshot: {} });
      expect(await other.leases.claimExpired('C', 60_000, 10)).toEqual([]);
      // A server looks (acquires, finds it running, lets go unused): still not claimable.
      const look = (await other.leases.acquireLease('u', 'C', 60_000))!;
      await other.leases.releaseLease(look, { unused: true });
      expect(await other.leases.claimExpired('C', 60_000, 10)).toEqual([]);
      // Quiet for a whole (short) lease: now it is.
      await sleep(300);
      expect((await other.leases.claimExpired('C', 200, 10)).map((l) => l.sessionId)).toEqual(['u']);

      // A runner that wrote under its lease and let it go (or whose lease ran out) is gone: claimed at once.
      await server.create({ id: 'r', packageId: null, snapshot: {}, entry: created('waiting_user.intake') });
      const ran = (await server.leases.acquireLease('r', 'A', 60_000))!;
      await server.append({ id: 'r', expectedRevision: 1, entries: [entry('go', 'running.manager.thinking')], snapshot: {}, lease: ran });
      await server.leases.releaseLease(ran);
      expect((await other.leases.claimExpired('C', 60_000, 10)).map((l) => l.sessionId)).toEqual(['r']);
    },
  );

  it('migrates a schema from before leases (sessions already written) to the current one', async () => {
    const schema = freshSchema();
    const old = connect(schema);
    await old.create({ id: 'v1', packageId: null, snapshot: { kept: true }, entry: created() });
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      // Back to the version before leases (step 3; the steps after it are rerun too), as a database from before them.
      await admin.query(
        `DROP TABLE "${schema}".leases; DROP INDEX "${schema}".sessions_running; DROP INDEX "${schema}".sessions_by_position; DELETE FROM "${schema}".schema_version WHERE version >= 3`,
      );
    } finally {
      await admin.end();
    }
    const upgraded = connect(schema);
    expect(await upgraded.leases.acquireLease('v1', 'A', 1000)).toMatchObject({ token: 1 });
    expect((await upgraded.load('v1'))!.snapshot).toEqual({ kept: true });
    expect(PG_SCHEMA_VERSION).toBeGreaterThanOrEqual(2);
  });

  it('the event bus: events published through one store reach a watcher on another, in order; long strings are clipped; forged ones are ignored', async () => {
    const schema = freshSchema();
    const [a, b] = [connect(schema), connect(schema)];
    const seen: unknown[] = [];
    const stop = await b.events.watchEvents('s1', (e) => seen.push(e));
    const other: unknown[] = [];
    await b.events.watchEvents('s2', (e) => other.push(e));
    const events = Array.from({ length: 50 }, (_, i) => ({ type: 'notice', sessionId: 's1', at: i, text: `n${i}` }));
    for (const e of events) a.events.publishEvents('s1', [e]);
    a.events.publishEvents('s1', [{ type: 'notice', sessionId: 's1', at: 99, text: 'x'.repeat(50_000) }]);
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query('SELECT pg_notify($1, $2)', [`steward_events_${schema}`, 'not json']);
    await admin.query('SELECT pg_notify($1, $2)', [`steward_events_${schema}`, '{"sessionId":"s1","event":"text"}']);
    await admin.end();
    await expect.poll(() => seen.length).toBe(51);
    expect(seen.slice(0, 50)).toEqual(events);
    expect((seen[50] as { text: string }).text).toHaveLength(1000);
    expect(other).toEqual([]);
    await stop();
  });

  it('the event bus: the events of one moment go out in one statement, in order', async () => {
    const schema = freshSchema();
    const b = connect(schema);
    const seen: unknown[] = [];
    const stop = await b.events.watchEvents('s1', (e) => seen.push(e));
    const pool = new pg.Pool({ connectionString: url });
    /** The events each statement the bus sent carried. */
    const statements: number[] = [];
    const bus = new PgEventBus(
      pool,
      (sql, params) => {
        statements.push((params[1] as string[]).length);
        return pool.query(sql, params);
      },
      `steward_events_${schema}`,
      `"${schema}"`,
      'the test database',
    );
    try {
      const events = Array.from({ length: 4 }, (_, i) => ({ type: 'notice', sessionId: 's1', at: i, text: `n${i}` }));
      // Three in one turn of the event loop, one a moment later (a timer that fires before the bus's own).
      for (const e of events.slice(0, 3)) bus.publishEvents('s1', [e]);
      await sleep(1);
      bus.publishEvents('s1', [events[3]]);
      await bus.flush();
      expect(statements).toEqual([4]);
      await expect.poll(() => seen.length).toBe(4);
      expect(seen).toEqual(events);
    } finally {
      await bus.close();
      await stop();
      await pool.end();
    }
  });

  it('the event bus: flush waits for what was published before it, not for what a busy publisher adds meanwhile', async () => {
    const a = connect(freshSchema());
    const flush = a.events.flush!.bind(a.events);
    // Connected first: the first statement's connection must not count as the wait.
    a.events.publishEvents('s1', [{ type: 'notice', text: 'warm-up' }]);
    await flush();
    a.events.publishEvents('s1', [{ type: 'notice', text: 'first' }]);
    // A publisher that never pauses: a new event every loop turn, until the flush resolves or 10 s pass.
    let flushed = false;
    const until = Date.now() + 10_000;
    const busy = (async () => {
      for (let n = 0; !flushed && Date.now() < until; n++) {
        a.events.publishEvents('s1', [{ type: 'notice', text: `more ${n}` }]);
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    await flush();
    const stoppedByFlush = Date.now() < until;
    flushed = true;
    await busy;
    expect(stoppedByFlush).toBe(true);
    await flush();
  });
});
