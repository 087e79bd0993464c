import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createRuntime, MemoryStore, SqliteStore, type Model, type UserEvent } from '../../src/index.js';
import type { AppendInput, SessionStore } from '../../src/store.js';
import { scriptedCall, ScriptedModel } from '../../src/testing.js';
import { resumable } from '../../src/runtime/persisted.js';
import { asSavedStopped } from '../support/stopped-snapshot.js';

const never: Model = { label: 'hangs', complete: () => new Promise(() => {}) };

const stores: Array<[string, () => { store: SessionStore; cleanup: () => void }]> = [
  ['memory', () => ({ store: new MemoryStore(), cleanup: () => {} })],
  [
    'sqlite',
    () => {
      const dir = mkdtempSync(join(tmpdir(), 'steward-durable-'));
      const store = new SqliteStore(join(dir, 's.db'));
      return {
        store,
        cleanup: () => {
          void store.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  ],
];

describe.each(stores)('durable sessions on the %s store', (_name, make) => {
  let cleanup = () => {};
  afterEach(() => cleanup());

  it('journals every accepted event and actor result with the snapshot', async () => {
    const made = make();
    cleanup = made.cleanup;
    const model = new ScriptedModel([
      { agent: 'manager', toolCalls: [scriptedCall('read_blackboard', { tags: ['request'] })] },
      { agent: 'manager', toolCalls: [scriptedCall('run_worker', { workerId: 'echo', reason: 'echo', requiresApproval: true })] },
    ]);
    const runtime = createRuntime({ model, store: made.store });
    const session = await runtime.createSession({ packageId: 'tiny' });
    const result = await session.send({ type: 'user_submitted_input', text: 'hello' });
    expect(result.ok).toBe(true);
    const journal = await made.store.journal(session.id);
    expect(journal.map((e) => [e.seq, e.kind, e.type, e.state])).toEqual([
      [1, 'created', 'created', 'waiting_user.intake'],
      [2, 'event', 'user_submitted_input', 'running.manager.thinking'],
      [3, 'actor', 'xstate.done.actor.managerTurn', 'running.manager.thinking'],
      [4, 'actor', 'xstate.done.actor.managerTurn', 'waiting_user.approve_step'],
    ]);
    const stored = await made.store.load(session.id);
    // Entries that arrive while a write is under way share the next transaction.
    expect(stored!.revision).toBeGreaterThan(1);
    expect(stored!.revision).toBeLessThanOrEqual(journal.length);
    expect(stored!.snapshot).toEqual(JSON.parse(JSON.stringify(session.persisted())));
    model.assertComplete();
  });

  it('resumes after a crash: the in-flight model call runs again and nothing accepted is lost', async () => {
    const made = make();
    cleanup = made.cleanup;
    const first = createRuntime({ model: never, store: made.store });
    const crashed = await first.createSession({ packageId: 'tiny' });
    void crashed.send({ type: 'user_submitted_input', text: 'remember me' });
    await new Promise((r) => setTimeout(r, 20));
    crashed.stop(); // the process "dies" while the manager's call is in flight

    const model = new ScriptedModel([{ agent: 'manager', toolCalls: [scriptedCall('ask_user', { message: 'Got it.' })] }]);
    const second = createRuntime({ model, store: made.store });
    const resumed = await second.resumeSession(crashed.id);
    const view = await resumed.settled();
    expect(view.waitingReason).toBe('intake'); // a clarification before intake is confirmed
    expect(view.message).toBe('Got it.');
    expect(model.calls[0]!.messages.at(-1)).toEqual({ role: 'user', content: 'remember me' });
    const snapshot = resumed.actorRef.getSnapshot();
    expect(snapshot.context.blackboard.request?.map((v) => ('body' in v ? v.body : null))).toEqual(['remember me']);
    const journal = await made.store.journal(crashed.id);
    expect(journal.map((e) => e.seq)).toEqual([1, 2, 3]);
    model.assertComplete();
  });

  it('saves the state it stopped in when stopped while a write is under way, so a resume runs the call again', async () => {
    const made = make();
    cleanup = made.cleanup;
    // The write of the user's request is held until the session has gone on (its first round
    // replied, the second in flight) and been stopped: the writes still queued then must
    // save the running session, not the stopped actor (no children: it would never run again).
    let hold: () => void = () => {};
    const held = new Promise<void>((resolve) => (hold = resolve));
    let appendsSeen = 0;
    const store = new Proxy(made.store, {
      get(target, key) {
        if (key === 'append')
          return async (input: AppendInput) => {
            appendsSeen += 1;
            if (input.entries.some((e) => e.type === 'user_submitted_input')) await held;
            return target.append(input);
          };
        const value = Reflect.get(target, key) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const first = new ScriptedModel([{ agent: 'manager', toolCalls: [scriptedCall('read_blackboard', { tags: ['request'] })] }]);
    let calls = 0;
    const model: Model = { label: 'one reply, then hangs', complete: (request) => (++calls === 1 ? first.complete(request) : never.complete(request)) };
    const runtime = createRuntime({ model, store });
    const session = await runtime.createSession({ packageId: 'tiny' });
    void session.send({ type: 'user_submitted_input', text: 'keep going' });
    await vi.waitFor(() => expect(calls).toBe(2), { timeout: 10_000 });
    expect(appendsSeen).toBe(1); // the request's write is still held; the round's result waits behind it
    const closing = session.close();
    hold();
    await closing;

    const stored = await made.store.load(session.id);
    const saved = (stored!.snapshot as { snapshot: { status: string; value: unknown; children: Record<string, unknown> } }).snapshot;
    expect(saved.status).toBe('active');
    expect(saved.value).toEqual({ running: { manager: 'thinking' } });
    expect(Object.keys(saved.children)).toEqual(['managerTurn']);
    const journal = await made.store.journal(session.id);
    expect(journal.map((e) => e.type)).toEqual(['created', 'user_submitted_input', 'xstate.done.actor.managerTurn']);

    const again = new ScriptedModel([{ agent: 'manager', toolCalls: [scriptedCall('ask_user', { message: 'Still here.' })] }]);
    const resumed = await createRuntime({ model: again, store: made.store }).resumeSession(session.id);
    const view = await resumed.settled();
    expect(view.waitingReason).toBe('intake');
    expect(view.message).toBe('Still here.');
    again.assertComplete();
  });

  it('resumes a session an earlier Steward saved as stopped: waiting, as it was; running, refused naming the fork that rebuilds it', async () => {
    const made = make();
    cleanup = made.cleanup;
    const first = createRuntime({ model: never, store: made.store });
    const waiting = await first.createSession({ packageId: 'tiny' });
    const running = await first.createSession({ packageId: 'tiny' });
    void running.send({ type: 'user_submitted_input', text: 'in flight' });
    await vi.waitFor(() => expect(running.view().phase).toBe('running'), { timeout: 10_000 });
    // What that Steward wrote: the actor's snapshot after it stopped (no children).
    for (const session of [waiting, running]) {
      const stopped = asSavedStopped(session.persisted());
      await session.close();
      const stored = await made.store.load(session.id);
      await made.store.append({ id: session.id, expectedRevision: stored!.revision, entries: [], snapshot: stopped });
    }
    const model = new ScriptedModel([
      { agent: 'manager', toolCalls: [scriptedCall('ask_user', { message: 'Yes?' })] },
      { agent: 'manager', toolCalls: [scriptedCall('ask_user', { message: 'Forked.' })] },
    ]);
    const later = createRuntime({ model, store: made.store });
    const resumed = await later.resumeSession(waiting.id);
    expect((await resumed.settled()).waitingReason).toBe('intake');
    const sent = await resumed.send({ type: 'user_submitted_input', text: 'hello again' });
    expect(sent.ok && sent.view.message).toBe('Yes?');
    await expect(later.resumeSession(running.id)).rejects.toThrow(
      new RegExp(`Session "${running.id}" was saved while it ran but after it had been stopped .* \`steward fork ${running.id} --at SEQ\``),
    );
    // Done, it stays done.
    expect(resumable('ended', { status: 'stopped', value: 'done', context: {} })).toMatchObject({ status: 'done', value: 'done' });
    // The fix it names: the fork at the last entry runs the call again.
    const last = (await made.store.journal(running.id)).at(-1)!;
    const fork = await later.forkSession(running.id, { atSeq: last.seq });
    expect((await fork.settled()).message).toBe('Forked.');
    model.assertComplete();
  });

  it('refuses a second writer with a conflict and writes nothing for it', async () => {
    const made = make();
    cleanup = made.cleanup;
    const model = new ScriptedModel([{ agent: 'manager', toolCalls: [scriptedCall('ask_user', { message: 'one' })] }]);
    const runtimeA = createRuntime({ model, store: made.store });
    const a = await runtimeA.createSession({ packageId: 'tiny' });
    const runtimeB = createRuntime({ model: never, store: made.store });
    const b = await runtimeB.resumeSession(a.id);
    expect((await a.send({ type: 'user_submitted_input', text: 'from A' })).ok).toBe(true);
    const lost = await b.send({ type: 'user_submitted_input', text: 'from B' });
    expect(lost.ok).toBe(false);
    if (!lost.ok) expect(lost.error.code).toBe('conflict');
    const journal = await made.store.journal(a.id);
    expect(journal.map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(journal.some((e) => JSON.stringify(e.payload).includes('from B'))).toBe(false);
    model.assertComplete();
  });

  it('names the session when its snapshot comes from a newer Steward or is not a session', async () => {
    const made = make();
    cleanup = made.cleanup;
    const runtime = createRuntime({ model: never, store: made.store });
    await made.store.create({
      id: 'future',
      packageId: null,
      snapshot: { schemaVersion: 99, snapshot: {} },
      entry: { kind: 'created', type: 'created', payload: {}, state: '' },
    });
    await made.store.create({
      id: 'junk',
      packageId: null,
      snapshot: { schemaVersion: 1, snapshot: { nope: true } },
      entry: { kind: 'created', type: 'created', payload: {}, state: '' },
    });
    await expect(runtime.resumeSession('future')).rejects.toThrow(/Session "future" was saved by a newer Steward \(snapshot schema v99/);
    await expect(runtime.resumeSession('junk')).rejects.toThrow(/Session "junk" has a snapshot that is not a valid Steward session/);
    await expect(runtime.resumeSession('missing')).rejects.toThrow(/No session "missing"/);
  });
});

/** A MemoryStore that records, per append, whether it was asked to be durable and where the session stood. */
class RecordingStore extends MemoryStore {
  readonly appends: Array<{ durable: boolean; states: string[] }> = [];
  override async append(input: AppendInput): Promise<number> {
    this.appends.push({ durable: input.durable !== false, states: input.entries.map((e) => e.state) });
    return super.append(input);
  }
}

describe('durability of the writes a session makes', () => {
  it('defers only the commits inside a model loop; the wait that ends send() and every refusal are durable', async () => {
    const store = new RecordingStore();
    const model = new ScriptedModel([
      { agent: 'manager', toolCalls: [scriptedCall('read_blackboard', { tags: ['request'] })] },
      { agent: 'manager', toolCalls: [scriptedCall('read_blackboard', { tags: ['request'] })] },
      { agent: 'manager', toolCalls: [scriptedCall('ask_user', { message: 'Which one?' })] },
    ]);
    const runtime = createRuntime({ model, store });
    const session = await runtime.createSession({ packageId: 'tiny' });
    expect((await session.send({ type: 'user_submitted_input', text: 'hello' })).ok).toBe(true);
    expect((await session.send({ type: 'user_approved_next_step' })).ok).toBe(false); // refused by the chart at the wait
    expect((await session.send({ type: 'no_such_event' } as unknown as UserEvent)).ok).toBe(false); // refused before the chart
    const last = (a: { states: string[] }) => a.states.at(-1)!;
    // Every write that left the session running was deferred, every other one durable.
    for (const a of store.appends) expect([last(a), a.durable]).toEqual([last(a), !last(a).startsWith('running.')]);
    expect(store.appends.filter((a) => !a.durable).length).toBeGreaterThan(0);
    expect(store.appends.at(-3)).toMatchObject({ durable: true, states: expect.arrayContaining(['waiting_user.intake']) });
    expect(store.appends.slice(-2).map((a) => a.durable)).toEqual([true, true]);
    model.assertComplete();
  });

  it('makes a refusal durable even while the session runs (a resumed in-flight call)', async () => {
    const store = new RecordingStore();
    const first = createRuntime({ model: never, store });
    const crashed = await first.createSession({ packageId: 'tiny' });
    void crashed.send({ type: 'user_submitted_input', text: 'go' });
    await new Promise((r) => setTimeout(r, 20));
    crashed.stop();
    const resumed = await createRuntime({ model: never, store }).resumeSession(crashed.id);
    expect(resumed.view().state).toMatch(/^running\./);
    const before = store.appends.length;
    const refused = await resumed.send({ type: 'user_approved_next_step' });
    expect(refused.ok).toBe(false);
    expect(store.appends.slice(before)).toEqual([{ durable: true, states: [expect.stringMatching(/^running\./)] }]);
    resumed.stop();
  });
});
