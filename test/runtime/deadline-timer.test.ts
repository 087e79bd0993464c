/**
 * Deadlines in time (SQLite, a fake clock): the due time is kept in the store with the write
 * that opened the wait, so a restart re-arms the same time, never a later one; a deadline that
 * came due while nobody held the session fires as soon as someone does; each fires once
 * (journalled by steward through deadline), and a deadline that moved on is not sent again;
 * `steward serve`'s scan fires the due deadlines of sessions it does not hold, once.
 */
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/runtime/runtime.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { startServe } from '../../src/serve/server.js';
import { scriptedCall, ScriptedModel } from '../../src/testing.js';
import type { DeadlinePolicy } from '../../src/core/machines/deadlines.js';
import { useTempDir } from '../support/temp.js';
import { fakeClock } from '../support/fake-clock.js';

const temp = useTempDir('steward-deadlines-');
const HOUR = 3_600_000;
const deadlines: DeadlinePolicy = { approve_step: { after: '1h', outcome: 'escalate', to: 'leads', then: { after: '30m', outcome: 'reject' } } };
const proposes = () =>
  new ScriptedModel([
    { agent: 'manager', toolCalls: [scriptedCall('run_worker', { workerId: 'echo', reason: 'Restate it.', requiresApproval: true })] },
    { agent: 'manager', toolCalls: [scriptedCall('finish', { summary: 'Nobody approved it: stopped.' })] },
  ]);
const input = { type: 'user_submitted_input', text: 'A ghost story.' } as const;

async function deadlineEntries(store: SqliteStore, id: string) {
  return (await store.journal(id)).filter((e) => e.type === 'deadline_passed');
}

describe('deadlines in time', () => {
  it('keeps the due time across a restart, fires each rule once, and never the same one twice', async () => {
    const db = temp.path('restart.db');
    const clock = fakeClock();
    const t0 = clock.now();
    const model = proposes();
    const store = new SqliteStore(db);
    const first = createRuntime({ model, store, clock, deadlines });
    const session = await first.createSession({ packageId: 'tiny' });
    const waiting = await session.send(input);
    expect(waiting.ok && waiting.view.state).toBe('waiting_user.approve_step');
    const wait = session.view().wait!;
    expect((await store.load(session.id))!.deadline).toEqual({ wait, level: 0, dueAt: new Date(t0 + HOUR).toISOString() });

    await clock.advance(HOUR / 2);
    expect(await deadlineEntries(store, session.id)).toEqual([]);
    // The process stops (its timer with it) half-way; another starts on the same file.
    await session.close();
    await store.close();
    const reopened = new SqliteStore(db);
    const second = createRuntime({ model, store: reopened, clock, deadlines });
    const resumed = await second.resumeSession(session.id);
    // The same due time as before the restart: not an hour from the resume.
    expect((await reopened.load(session.id))!.deadline!.dueAt).toBe(new Date(t0 + HOUR).toISOString());

    await clock.advance(HOUR / 2 - 1);
    expect(await deadlineEntries(reopened, session.id)).toEqual([]);
    await clock.advance(1);
    await resumed.journalled();
    // Escalated: the next wait, for `leads`, due in 30 minutes from the escalation.
    expect(resumed.view()).toMatchObject({ state: 'waiting_user.approve_step', wait: wait + 1 });
    expect((await reopened.load(session.id))!.deadline).toEqual({ wait: wait + 1, level: 1, dueAt: new Date(t0 + HOUR + HOUR / 2).toISOString() });
    const [escalated] = await deadlineEntries(reopened, session.id);
    expect(escalated!.payload).toMatchObject({ type: 'deadline_passed', wait, level: 0, by: 'steward', through: 'deadline' });

    // The first deadline again (a late timer, a second scan): nothing is sent.
    expect(await resumed.passDeadline({ wait, level: 0, dueAt: new Date(t0 + HOUR).toISOString() })).toBeNull();

    await clock.advance(HOUR / 2);
    await resumed.journalled();
    await until(() => resumed.view().state === 'done');
    expect(resumed.view().message).toBe('Nobody approved it: stopped.');
    expect((await deadlineEntries(reopened, session.id)).map((e) => e.payload)).toMatchObject([{ level: 0 }, { wait: wait + 1, level: 1 }]);
    expect((await reopened.load(session.id))!.deadline).toBeNull();
    // The manager was told the step was rejected for want of a decision; no worker ran.
    expect(model.calls.filter((c) => c.agent === 'worker')).toEqual([]);
    await clock.advance(24 * HOUR);
    expect(await deadlineEntries(reopened, session.id)).toHaveLength(2);
    expect(await reopened.journal(session.id).then((j) => j.filter((e) => JSON.stringify(e.payload).includes('deadline_stale')))).toEqual([]);
    await resumed.close();
    await reopened.close();
  });

  it('a deadline that came due while nobody held the session fires as soon as someone does', async () => {
    const db = temp.path('late.db');
    const clock = fakeClock();
    const store = new SqliteStore(db);
    const runtime = createRuntime({ model: proposes(), store, clock, deadlines: { approve_step: { after: '10m', outcome: 'reject' } } });
    const session = await runtime.createSession({ packageId: 'tiny' });
    await session.send(input);
    await session.close();
    await clock.advance(3 * HOUR);
    expect(await deadlineEntries(store, session.id)).toEqual([]);
    const later = await runtime.resumeSession(session.id);
    await clock.advance(0);
    await until(() => later.view().state === 'done');
    expect(await deadlineEntries(store, session.id)).toHaveLength(1);
    await later.close();
    await store.close();
  });

  it('a decision that arrives after the due time, before the timer ran, finds the deadline passed: an expired approval is not approved', async () => {
    const clock = fakeClock();
    const store = new SqliteStore(temp.path('late-decision.db'));
    const model = proposes();
    const runtime = createRuntime({ model, store, clock, deadlines: { approve_step: { after: '10m', outcome: 'reject' } } });
    const session = await runtime.createSession({ packageId: 'tiny' });
    await session.send(input);
    const wait = session.view().wait!;
    clock.skip(11 * 60_000);
    const late = await session.send({ type: 'user_approved_next_step', wait, groups: ['admin'] });
    expect(late).toMatchObject({ ok: false, error: { code: 'wait_closed' } });
    expect(session.view()).toMatchObject({ state: 'done', message: 'Nobody approved it: stopped.' });
    expect(model.calls.filter((c) => c.agent === 'worker')).toEqual([]);
    expect(await deadlineEntries(store, session.id)).toHaveLength(1);
    await session.close();
    await store.close();
  });

  it("serve's scan fires the due deadline of a session nobody holds, once however often it scans", async () => {
    const clock = fakeClock();
    const store = new SqliteStore(temp.path('scan.db'));
    const runtime = createRuntime({ model: proposes(), store, clock, deadlines: { approve_step: { after: '10m', outcome: 'reject' } } });
    const session = await runtime.createSession({ packageId: 'tiny' });
    await session.send(input);
    await session.close();
    const serve = await startServe({ runtime, store, port: 0 });
    try {
      expect(await serve.host.fireDueDeadlines()).toEqual([]);
      await clock.advance(11 * 60_000);
      // A scan asked for while one runs gets that one's answer: one firing.
      const [a, b] = await Promise.all([serve.host.fireDueDeadlines(), serve.host.fireDueDeadlines()]);
      expect(a).toEqual([session.id]);
      expect(b).toEqual(a);
      expect(await serve.host.fireDueDeadlines()).toEqual([]);
      expect(await deadlineEntries(store, session.id)).toHaveLength(1);
      expect((await store.load(session.id))!.deadline).toBeNull();
    } finally {
      await serve.close();
      await store.close();
    }
  });
});

async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
