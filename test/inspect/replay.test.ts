import { describe, expect, it } from 'vitest';
import { createRuntime, MemoryStore, type SessionContext } from '../../src/index.js';
import { scriptedCall, DemoModel, ScriptedModel } from '../../src/testing.js';
import { JournalReplayer, snapshotState } from '../../src/inspect/replay.js';

/** Context without wall-clock times, which a replay cannot reproduce. */
function timeless(context: SessionContext): unknown {
  return JSON.parse(JSON.stringify(context, (key, value) => (key === 'at' ? '<time>' : value)));
}

describe('time travel: the journal replayed through the pure machine', () => {
  it('rebuilds the recorded state at every entry, and the live context at the last one', async () => {
    const store = new MemoryStore();
    const runtime = createRuntime({ model: new DemoModel(), store });
    const session = await runtime.createSession({ packageId: 'tiny' });
    await session.send({ type: 'user_confirmed_intake' }); // refused: nothing to confirm yet
    await session.send({ type: 'user_submitted_input', text: 'Tea in three lines.' });
    await session.send({ type: 'user_rejected_next_step', reason: 'not yet' });
    await session.send({ type: 'user_submitted_input', text: 'Go on.' });
    await session.send({ type: 'user_approved_next_step' });
    const artifactId = session.view().artifact!.id;
    await session.send({ type: 'user_rejected_artifact', artifactId, reason: 'shorter' });
    await session.send({ type: 'user_submitted_input', text: 'Two lines.' });
    await session.send({ type: 'user_accepted_artifact', artifactId: 'nope' }); // refused by its guard
    const last = await session.send({ type: 'user_accepted_artifact', artifactId: session.view().artifact!.id });
    expect(last.ok).toBe(true);

    const entries = await store.journal(session.id);
    expect(entries.length).toBeGreaterThan(12);
    const replayer = new JournalReplayer(runtime, 4);
    for (const entry of entries) {
      const point = replayer.at(session.id, entries, entry.seq);
      expect(snapshotState(point.snapshot), `entry #${entry.seq} ${entry.type}`).toBe(entry.state);
      expect(point.divergedAt).toBeUndefined();
    }
    const end = replayer.at(session.id, entries, entries.length);
    expect(timeless(end.snapshot.context as SessionContext)).toEqual(timeless(session.actorRef.getSnapshot().context));
    // Refusals are rebuilt with the reason the live session gave.
    expect((end.snapshot.context as SessionContext).rejections.map((r) => r.reason)).toEqual(session.view().rejections.map((r) => r.reason));

    // Stepping back uses the checkpoints and gives the same answer.
    const early = replayer.at(session.id, entries, 2);
    expect(snapshotState(early.snapshot)).toBe(entries[1]!.state);
  });

  it('replays a model failure saved as { name, message }', async () => {
    const store = new MemoryStore();
    const model = new ScriptedModel([
      { agent: 'manager', error: new Error('the server said 503') },
      { agent: 'manager', toolCalls: [scriptedCall('ask_user', { message: 'Back again.' })] },
    ]);
    const runtime = createRuntime({ model, store });
    const session = await runtime.createSession({ packageId: 'tiny' });
    await session.send({ type: 'user_submitted_input', text: 'hi' });
    expect(session.view().notice).toContain('503');
    const entries = await store.journal(session.id);
    const point = new JournalReplayer(runtime).at(session.id, entries, entries.length);
    expect(snapshotState(point.snapshot)).toBe('waiting_user.input');
    expect((point.snapshot.context as SessionContext).notice).toBe(session.view().notice);
  });

  it('reports where a replay stops matching the journal (e.g. the machine changed)', async () => {
    const store = new MemoryStore();
    const runtime = createRuntime({ model: new DemoModel(), store });
    const session = await runtime.createSession({ packageId: 'tiny' });
    await session.send({ type: 'user_submitted_input', text: 'x' });
    const entries = await store.journal(session.id);
    const tampered = entries.map((e) => (e.seq === 3 ? { ...e, state: 'waiting_user.revision' } : e));
    const point = new JournalReplayer(runtime).at(session.id, tampered, tampered.length);
    expect(point.divergedAt).toBe(3);
  });
});
