/**
 * Issue 12, part 4: forking a session after any journal entry. Each fork starts from the
 * state time travel shows at that entry (the journal prefix replayed through the machine),
 * the original is not touched, and a model call in flight at that point runs again.
 */
import { describe, expect, it } from 'vitest';
import { createRuntime, MemoryStore } from '../../src/index.js';
import { scriptedCall, ScriptedModel } from '../../src/testing.js';
import type { Model, ModelReply, ModelRequest, UserEvent } from '../../src/index.js';
import { JournalReplayer } from '../../src/inspect/replay.js';
import { storedSnapshot } from '../../src/runtime/persisted.js';

/** The story: approve, reject the artifact, revise, accept, finish. */
const script = () =>
  new ScriptedModel([
    { agent: 'manager', toolCalls: [scriptedCall('run_worker', { workerId: 'echo', reason: 'Restate.', requiresApproval: true })] },
    { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { note: 'Draft one.' } })] },
    { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { note: 'Draft two.' } })] },
    { agent: 'manager', toolCalls: [scriptedCall('finish', { summary: 'Done.' })] },
  ]);

/** Answers whatever runs again in a fork: the manager finishes, a worker submits. */
class Rerun implements Model {
  readonly label = 'rerun';
  readonly calls: ModelRequest[] = [];
  async complete(request: ModelRequest): Promise<ModelReply> {
    this.calls.push(request);
    const call =
      request.agent === 'manager'
        ? { id: `r${this.calls.length}`, type: 'function' as const, function: { name: 'finish', arguments: '{"summary":"Fork done."}' } }
        : { id: `r${this.calls.length}`, type: 'function' as const, function: { name: 'submit', arguments: '{"outputs":{"note":"Fork draft."}}' } };
    return { content: null, toolCalls: [call] };
  }
}

async function finishedStory(store: MemoryStore) {
  const runtime = createRuntime({ model: script(), store });
  const session = await runtime.createSession({ packageId: 'tiny', id: 'original' });
  for (const event of [
    { type: 'user_submitted_input', text: 'A ghost story.' },
    { type: 'user_approved_next_step' },
    { type: 'user_rejected_artifact', artifactId: 'a1', reason: 'Shorter.' },
    { type: 'user_submitted_input', text: 'Half as long.' },
    { type: 'user_accepted_artifact', artifactId: 'a2' },
  ] satisfies UserEvent[]) {
    const result = await session.send(event);
    expect(result.ok, event.type).toBe(true);
  }
  expect(session.view().phase).toBe('done');
  await session.close();
}

describe('forkSession', () => {
  it('forks at every seq of a finished session: each fork starts as the replay of the prefix; the original is unchanged', async () => {
    const store = new MemoryStore();
    await finishedStory(store);
    const journal = await store.journal('original');
    const before = JSON.stringify({ journal, stored: await store.load('original') });
    const model = new Rerun();
    const runtime = createRuntime({ model, store });
    const replayer = new JournalReplayer(runtime);
    const current = storedSnapshot(runtime.machine, (await store.load('original'))!).context;
    let reruns = 0;
    for (const entry of journal) {
      const calls = model.calls.length;
      const fork = await runtime.forkSession('original', { atSeq: entry.seq, id: `fork-${entry.seq}` });
      await fork.settled();
      await fork.close();
      const forkJournal = await store.journal(fork.id);
      // The fork's first entry: where it came from, and the state it starts in.
      expect(forkJournal[0]).toMatchObject({
        seq: 1,
        kind: 'created',
        type: 'forked',
        state: entry.state,
        payload: { forkedFrom: { id: 'original', seq: entry.seq } },
      });
      const start = (forkJournal[0]!.payload as { snapshot: { snapshot: { context: Record<string, unknown>; value: unknown } } }).snapshot.snapshot;
      const replayed = replayer.at('original', journal, entry.seq, current).snapshot;
      const { sessionId, ledger, ...rest } = start.context as { sessionId: string; ledger: { forkedFrom: unknown } };
      const { sessionId: _id, ledger: replayedLedger, ...replayedRest } = replayed.context as { sessionId: string; ledger: object };
      expect(sessionId).toBe(fork.id);
      expect(ledger).toEqual({ ...replayedLedger, forkedFrom: { id: 'original', seq: entry.seq } });
      expect(JSON.parse(JSON.stringify(rest))).toEqual(JSON.parse(JSON.stringify(replayedRest)));
      expect(start.value).toEqual(replayed.value);
      // A fork at a running point makes the interrupted call again (once); a waiting one makes none.
      const running = entry.state.startsWith('running.');
      expect(model.calls.length - calls, `seq ${entry.seq} (${entry.state})`).toBe(running ? 1 : 0);
      if (running) {
        reruns++;
        expect(forkJournal[1]?.type).toMatch(/^xstate\.done\.actor\.(managerTurn|workerTurn)$/);
      } else {
        expect(forkJournal).toHaveLength(1);
      }
      expect((await runtime.openSession(fork.id)).view().forkedFrom).toEqual({ id: 'original', seq: entry.seq });
    }
    expect(reruns).toBe(journal.filter((e) => e.state.startsWith('running.')).length);
    expect(reruns).toBeGreaterThan(2);
    // Byte for byte: forking read the original and wrote nothing to it.
    expect(JSON.stringify({ journal: await store.journal('original'), stored: await store.load('original') })).toBe(before);
  });

  it('a fork before the artifact was accepted holds nothing written later, and goes its own way', async () => {
    const store = new MemoryStore();
    await finishedStory(store);
    const journal = await store.journal('original');
    const atReview = journal.find((e) => e.state === 'waiting_user.review_artifact')!;
    const runtime = createRuntime({ model: new Rerun(), store });
    const fork = await runtime.forkSession('original', { atSeq: atReview.seq });
    const view = fork.view();
    expect(view).toMatchObject({
      waitingReason: 'review_artifact',
      forkedFrom: { id: 'original', seq: atReview.seq },
      artifacts: [{ id: 'a1', status: 'pending_review' }],
    });
    expect(view.blackboard.find((b) => b.tag === 'note')).toMatchObject({ version: 1 });
    // Its history (the archive) holds what was written up to that entry, and nothing after.
    expect((await fork.tagVersions('note')).map((v) => v.body)).toEqual(['Draft one.']);
    const original = await runtime.history('original');
    expect((await original.tagVersions('note')).map((v) => v.body)).toEqual(['Draft one.', 'Draft two.']);
    const forkTranscript = await fork.transcript('manager');
    expect((await original.transcript('manager')).slice(0, forkTranscript.length)).toEqual(forkTranscript);
    const result = await fork.send({ type: 'user_accepted_artifact', artifactId: 'a1' });
    expect(result.view).toMatchObject({ phase: 'done', message: 'Fork done.' });
    // Time travel works on the fork too: entry 1 is its starting state.
    const replayer = new JournalReplayer(runtime);
    const forkJournal = await store.journal(fork.id);
    expect(replayer.at(fork.id, forkJournal, 1).snapshot.value).toEqual({ waiting_user: 'review_artifact' });
    expect(replayer.at(fork.id, forkJournal, forkJournal.length).divergedAt).toBeUndefined();
  });

  it('names the range of seqs when atSeq is out of range, and needs a store', async () => {
    const store = new MemoryStore();
    await finishedStory(store);
    const runtime = createRuntime({ model: new Rerun(), store });
    const last = (await store.journal('original')).length;
    await expect(runtime.forkSession('original', { atSeq: last + 1 })).rejects.toThrow(`a whole number from 1 to ${last} (got ${last + 1})`);
    await expect(runtime.forkSession('original', { atSeq: 0 })).rejects.toThrow('from 1 to');
    await expect(runtime.forkSession('nope', { atSeq: 1 })).rejects.toMatchObject({ code: 'session_not_found' });
    await expect(createRuntime({ model: new Rerun() }).forkSession('original', { atSeq: 1 })).rejects.toThrow('forkSession needs a store');
  });
});
