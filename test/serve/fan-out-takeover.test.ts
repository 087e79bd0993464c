/**
 * A takeover in the middle of a fan-out, on PostgreSQL: the server running a session dies
 * (its connection gone, its lease runs out) with two of three branches finished and the third's
 * model call in flight. Another server takes the session over and runs only that branch again.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ModelRequest } from '../../src/core/models/model.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import { SessionHost } from '../../src/serve/session-host.js';
import { PostgresStore } from '../../src/store/postgres-store.js';
import { until } from '../support/cli-process.js';
import { postgresUnavailable } from '../support/postgres.js';
import { usePostgres } from '../support/use-postgres.js';
import { useTempDir } from '../support/temp.js';
import { runTogether, submitOwn, TRIO, TrioModel, trioPackage } from '../support/trio-package.js';

const pg = usePostgres();
const temp = useTempDir('steward-fan-out-takeover-');

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

/** The lease of the server that dies: long enough that a busy machine never loses it while the branches run. */
const DEAD_LEASE_MS = 2_000;

/** A call that never answers until its session is stopped: east's, in flight when its server dies. */
const never = ({ signal }: ModelRequest) => new Promise<never>((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason)));

describe.skipIf(postgresUnavailable !== null)('a fan-out taken over on PostgreSQL', () => {
  it('the server that takes it over runs only the branch that had not finished', async () => {
    const url = await pg.createDatabase();
    const packagesDir = trioPackage(temp.path('pkgs'));
    const deadStore = new PostgresStore(url);
    const dying = new TrioModel([runTogether(TRIO)], (id, request) => (id === 'east' ? never(request) : submitOwn(id)));
    const dead = new SessionHost(createRuntime({ model: dying, store: deadStore, packagesDir }), deadStore, { leaseMs: DEAD_LEASE_MS, owner: 'dead' });
    const id = (await dead.create({ packageId: 'trio' })).view.id;
    const send = dead.send(id, { type: 'user_submitted_input', text: 'Notes from three sides.' });
    const watch = new PostgresStore(url);
    cleanups.push(() => watch.close());
    await until(async () => {
      const types = (await watch.journal(id)).map((e) => e.type);
      return types.includes('xstate.done.actor.branch:run_north') && types.includes('xstate.done.actor.branch:run_south') && dying.started.get('east') === 1;
    }, 'two branches finished, the third in flight');
    await deadStore.close();

    const store = new PostgresStore(url);
    const survivor = new TrioModel([], (worker) => submitOwn(worker));
    const host = new SessionHost(createRuntime({ model: survivor, store, packagesDir }), store, { leaseMs: 60_000, owner: 'B' });
    cleanups.push(
      () => store.close(),
      () => host.drain(0),
    );
    await until(async () => {
      await host.scanOnce();
      return (await watch.journal(id)).at(-1)?.state === 'waiting_user.review_artifact';
    }, 'the session taken over and at the review');
    expect(Object.fromEntries(survivor.started)).toEqual({ east: 1 });
    const view = (await host.view(id)).view;
    expect(view.team?.map((t) => [t.workerId, t.status])).toEqual(TRIO.map((t) => [t, 'submitted']));
    expect((await send).ok).toBe(false);
  }, 60_000);
});
