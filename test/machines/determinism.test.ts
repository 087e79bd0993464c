/**
 * The machine's transitions are pure: no clock, no randomness, no I/O in its guards and
 * actions. XState's pure `initialTransition` / `transition`, applied twice to the same
 * snapshot and the same event some milliseconds apart, give equal snapshots — for a refused
 * event, an accepted user event and an actor result. A time the context keeps (a tag
 * version's, a refusal's) comes with the event; without one, the context holds no time at all.
 * Because of that, xstate/graph's `getShortestPaths` with its default serializer (the state
 * value and the whole context) finishes on the machine.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { fromPromise, initialTransition, transition, type AnyMachineSnapshot, type EventFromLogic } from 'xstate';
import { getShortestPaths } from 'xstate/graph';
import type { SessionContext, SessionInput, TurnOutput } from '../../src/core/machines/session.context.js';
import { sessionMachine } from '../../src/core/machines/session.machine.js';
import type { ModelReply, ToolCall } from '../../src/core/models/model.js';
import { packageInfo } from '../../src/runtime/runtime.js';
import { loadPackages } from '../../src/skills/index.js';

const never = fromPromise<TurnOutput, SessionContext>(() => new Promise<TurnOutput>(() => {}));
const machine = sessionMachine.provide({ actors: { managerTurn: never, workerTurn: never } });
type Event = EventFromLogic<typeof machine>;
type Snap = ReturnType<typeof initialTransition<typeof machine>>[0];

const tiny = packageInfo(loadPackages().get('tiny')!);
const input: SessionInput = { sessionId: 'pure', package: tiny, maxBurst: 4 };

const call = (name: string, args: unknown, id = `call_${name}`): ToolCall => ({ id, type: 'function', function: { name, arguments: JSON.stringify(args) } });
const reply = (...toolCalls: ToolCall[]): ModelReply => ({ content: null, toolCalls });
const ISO_TIME = /\d{4}-\d\d-\d\dT\d\d:\d\d/;

/** What a snapshot is, without the child actor objects (their identity differs per call). */
function essence(snapshot: AnyMachineSnapshot) {
  return {
    status: snapshot.status,
    value: snapshot.value,
    context: snapshot.context as SessionContext,
    persisted: JSON.stringify(machine.getPersistedSnapshot(snapshot)),
  };
}

/** Applies `event` to `snapshot` twice, some milliseconds apart, and expects equal results. */
async function twiceEqual(snapshot: Snap, event: Event): Promise<Snap> {
  const [first] = transition(machine, snapshot, event);
  await sleep(15);
  const [second] = transition(machine, snapshot, event);
  expect(essence(second)).toEqual(essence(first));
  return first;
}

const start = () => initialTransition(machine, input)[0];

describe('pure, deterministic transitions', () => {
  it('the initial transition gives the same snapshot every time', async () => {
    const first = start();
    await sleep(15);
    expect(essence(start())).toEqual(essence(first));
    expect(first.value).toEqual({ waiting_user: 'intake' });
  });

  it('a refused event: the same refusal, with the state and reason read from the chart', async () => {
    const after = await twiceEqual(start(), { type: 'user_approved_next_step' });
    expect(after.value).toEqual({ waiting_user: 'intake' });
    expect(after.context.rejections).toEqual([
      {
        type: 'user_approved_next_step',
        state: 'waiting_user.intake',
        reason:
          '"user_approved_next_step" is not accepted while the session waits in intake. Accepted now: user_submitted_input, user_confirmed_intake, user_answered_questions, user_skipped_questions.',
      },
    ]);
    // A guard's own message, also under a pure transition.
    const guarded = await twiceEqual(start(), { type: 'user_confirmed_intake' });
    expect(guarded.context.rejections.at(-1)?.reason).toBe('There is no request to confirm yet: send user_submitted_input with your request first.');
    // The time of a stamped event is the event's, not the clock's.
    const stamped = await twiceEqual(start(), { type: 'user_approved_next_step', at: '2026-01-02T03:04:05.000Z' });
    expect(stamped.context.rejections.at(-1)?.at).toBe('2026-01-02T03:04:05.000Z');
  });

  it("an accepted user event: the request version carries the event's time, or none", async () => {
    const unstamped = await twiceEqual(start(), { type: 'user_submitted_input', text: 'A note about otters.' });
    expect(unstamped.value).toEqual({ running: { manager: 'thinking' } });
    expect(JSON.stringify(unstamped.context)).not.toMatch(ISO_TIME);
    const stamped = await twiceEqual(start(), { type: 'user_submitted_input', text: 'A note about otters.', at: '2026-01-02T03:04:05.000Z' });
    expect(stamped.context.blackboard.request?.[0]).toMatchObject({ body: 'A note about otters.', writtenBy: 'user', at: '2026-01-02T03:04:05.000Z' });
  });

  it('actor results (xstate.done.actor.*): the same reply gives the same snapshot, its artifact stamped by the reply', async () => {
    const [thinking] = transition(machine, start(), { type: 'user_submitted_input', text: 'A note about otters.' });
    const proposed = await twiceEqual(thinking, {
      type: 'xstate.done.actor.managerTurn',
      output: reply(call('list_workers', {}, 'c1'), call('run_worker', { workerId: 'echo', reason: 'Restate it.', requiresApproval: false }, 'c2')),
    });
    expect(proposed.value).toEqual({ running: { worker: 'thinking' } });
    const reviewed = await twiceEqual(proposed, {
      type: 'xstate.done.actor.workerTurn',
      output: { ...reply(call('submit', { outputs: { note: 'Otters hold hands.' } })), at: '2026-01-02T03:04:06.000Z' },
    });
    expect(reviewed.value).toEqual({ waiting_user: 'review_artifact' });
    expect(reviewed.context.blackboard.note?.[0]).toMatchObject({ body: 'Otters hold hands.', writtenBy: 'echo', at: '2026-01-02T03:04:06.000Z' });
    // A reply the rules refuse is refused the same way each time.
    const [again] = transition(machine, proposed, { type: 'xstate.done.actor.workerTurn', output: reply(call('submit', { outputs: { bogus: 'x' } })) });
    const refusedTwice = await twiceEqual(proposed, { type: 'xstate.done.actor.workerTurn', output: reply(call('submit', { outputs: { bogus: 'x' } })) });
    expect(essence(refusedTwice)).toEqual(essence(again));
    expect(refusedTwice.context.transcripts.worker.messages.at(-1)).toMatchObject({
      role: 'tool',
      content: expect.stringMatching(/^Error: You may only write your declared output tags/),
    });
  });
});

describe('xstate/graph with its default serializer', () => {
  it('getShortestPaths finishes, and walks to the same states every time', async () => {
    // One scripted course through the chart (approval, worker, review, one refused event):
    // the states are finite only if no transition writes a time or a random id.
    const events = (snapshot: AnyMachineSnapshot): Event[] => {
      const s = snapshot as Snap;
      const accepted = s.context.artifacts.some((a) => a.status === 'accepted');
      // One refused event per state at most (each refusal is a new state: the log grew).
      const refusable = s.context.rejections.length === 0;
      if (s.matches({ waiting_user: 'intake' }))
        return [{ type: 'user_submitted_input', text: 'Otters.' }, ...(refusable ? [{ type: 'user_confirmed_intake' } as const] : [])];
      if (s.matches({ running: { manager: 'thinking' } })) {
        return [
          {
            type: 'xstate.done.actor.managerTurn',
            output: accepted
              ? reply(call('finish', { summary: 'Done.' }))
              : reply(call('run_worker', { workerId: 'echo', reason: 'Restate.', requiresApproval: true })),
          },
        ];
      }
      if (s.matches({ waiting_user: 'approve_step' })) return [{ type: 'user_approved_next_step' }];
      if (s.matches({ running: { worker: 'thinking' } }))
        return [{ type: 'xstate.done.actor.workerTurn', output: reply(call('submit', { outputs: { note: 'Otters.' } })) }];
      if (s.matches({ waiting_user: 'review_artifact' }))
        return [{ type: 'user_accepted_artifact', artifactId: 'a1' }, ...(refusable ? [{ type: 'user_accepted_artifact', artifactId: 'a9' } as const] : [])];
      return [];
    };
    const paths = getShortestPaths(machine, { input, events });
    // The same walk some milliseconds later reaches the very same states (no clock inside).
    await sleep(15);
    const again = getShortestPaths(machine, { input, events });
    const states = (list: typeof paths) => JSON.stringify(list.map((p) => [p.state.value, p.state.context]));
    expect(states(again)).toBe(states(paths));
    const ends = new Set(paths.map((p) => JSON.stringify(p.state.value)));
    expect(ends).toContain('"done"');
    expect(ends).toContain(JSON.stringify({ waiting_user: 'review_artifact' }));
    // Every state once per refusal history: the main course (9 states) and its copies after
    // the refused confirm (all but the first) and after the refused a9 (the last four).
    expect(paths.length).toBeLessThan(30);
  });
});
