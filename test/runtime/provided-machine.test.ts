/**
 * `createRuntime({ machine })`: a machine made with `sessionMachine.provide(...)` runs every
 * session of the runtime — on SQLite, through fork and replay, behind serve — and a machine
 * of another shape is refused at start with what differs.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createMachine } from 'xstate';
import { createRuntime, MachineMismatchError, sessionMachine, SqliteStore, type SessionContext } from '../../src/index.js';
import { JournalReplayer } from '../../src/inspect/replay.js';
import { storedSnapshot } from '../../src/runtime/persisted.js';
import { startServe, type ServeHandle } from '../../src/serve/server.js';
import { scriptedCall, ScriptedModel } from '../../src/testing.js';
import { client } from '../serve/http.js';
import { useTempDir } from '../support/temp.js';

const temp = useTempDir('steward-machine-');
const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

/** The deployment's own rule, swapped in by guard name: every proposed step waits for a person. */
const everyStepWaits = sessionMachine.provide({
  guards: { stepNeedsApproval: ({ context }: { context: SessionContext }) => context.reply.boundary?.tool === 'run_worker' },
});

/** The manager runs echo asking for no approval; echo submits; the manager finishes. */
const script = () =>
  new ScriptedModel([
    { agent: 'manager', toolCalls: [scriptedCall('run_worker', { workerId: 'echo', reason: 'Restate it.', requiresApproval: false }, 'call_rw')] },
    { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { note: 'A note.' } })] },
    { agent: 'manager', toolCalls: [scriptedCall('finish', { summary: 'Done.' })] },
  ]);

function sqlite(name: string): SqliteStore {
  const store = new SqliteStore(temp.path(`${name}.db`));
  open.push(store);
  return store;
}

describe('createRuntime({ machine })', () => {
  it('runs the swapped guard on SQLite, forks and replays through the same machine', async () => {
    const store = sqlite('swap');
    const runtime = createRuntime({ model: script(), store, machine: everyStepWaits });
    const session = await runtime.createSession({ packageId: 'tiny', id: 'swapped' });
    const result = await session.send({ type: 'user_submitted_input', text: 'Otters.' });
    // Steward's own guard would run echo at once (the manager asked for no approval).
    expect(result.view).toMatchObject({ state: 'waiting_user.approve_step', approvalRequiredBy: 'policy' });
    const manager = await session.transcript('manager');
    expect(manager.at(-1)).toMatchObject({ role: 'user', content: expect.stringMatching(/^Correction: A person must approve this step.*deployment's rules/) });
    await session.close();

    // Resumed from the store: the same machine, the same state.
    const resumed = await createRuntime({ model: script(), store, machine: everyStepWaits }).resumeSession('swapped');
    expect(resumed.view().state).toBe('waiting_user.approve_step');
    await resumed.close();

    // Fork after the manager's reply: replayed through the provided machine, it waits too.
    const journal = await store.journal('swapped');
    const reply = journal.find((e) => e.type === 'xstate.done.actor.managerTurn')!;
    expect(reply.state).toBe('waiting_user.approve_step');
    const fork = await runtime.forkSession('swapped', { atSeq: reply.seq, id: 'fork' });
    expect(fork.view().state).toBe('waiting_user.approve_step');
    await fork.close();
    // The default machine replays the same journal elsewhere: the guard is what differs.
    const plain = createRuntime({ model: script(), store });
    const current = storedSnapshot(plain.machine, (await store.load('swapped'))!).context;
    expect(new JournalReplayer(plain).at('swapped', journal, reply.seq, current).snapshot.value).toEqual({ running: { worker: 'thinking' } });
    const replayed = new JournalReplayer(runtime).at('swapped', journal, reply.seq, current);
    expect(replayed.snapshot.value).toEqual({ waiting_user: 'approve_step' });
    expect(replayed.divergedAt).toBeUndefined();
  });

  it('serve runs the provided machine', async () => {
    const store = sqlite('serve');
    const runtime = createRuntime({ model: script(), store, machine: everyStepWaits });
    const server: ServeHandle = await startServe({ runtime, store, port: 0, log: () => {} });
    open.push(server);
    const http = client(server.url);
    const created = await http.post('/sessions', { packageId: 'tiny' });
    expect(created.status).toBe(201);
    const sent = await http.post(`/sessions/${created.body.view.id}/events`, { type: 'user_submitted_input', text: 'Otters.' });
    expect(sent.body).toMatchObject({ ok: true, view: { state: 'waiting_user.approve_step', approvalRequiredBy: 'policy' } });
  });

  it('refuses a machine of another shape, naming what differs', () => {
    const other = createMachine({ id: 'session', initial: 'idle', states: { idle: { on: { user_submitted_input: 'idle' } } } });
    let error: unknown;
    try {
      createRuntime({ model: script(), machine: other as never });
    } catch (e) {
      error = e;
    }
    expect(MachineMismatchError.isInstance(error)).toBe(true);
    const mismatch = error as MachineMismatchError;
    expect(mismatch.code).toBe('machine_mismatch');
    expect(mismatch.missingStates).toContain('session.waiting_user.approve_step');
    expect(mismatch.extraStates).toEqual(['session.idle']);
    expect(mismatch.message).toMatch(/sessionMachine\.provide/);
    expect(() => createRuntime({ model: script(), machine: {} as never })).toThrow(/needs a state machine made with sessionMachine\.provide/);
  });
});
