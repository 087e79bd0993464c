/**
 * After a fan-out's branches are done (the fan-in), on the chart with actors that never settle:
 * the test plays each model round's result as XState sends it (`xstate.done.actor.<id>`, with
 * `actorId`). The manager's next round keeps the burst's limit like any round, and a branch
 * held with an approved MCP call still runs it after a package upgrade during the review.
 */
import { describe, expect, it } from 'vitest';
import { createActor, fromCallback } from 'xstate';
import { sessionMachine, type TurnOutput } from '../../src/machine.js';
import { managerReplies, testingPackage, workerReplies } from '../../src/testing.js';

/** A model round or a tool call that never settles: the test sends what it would have. */
const never = fromCallback(() => {}) as never;

/** A session whose manager fanned out to noter (`call_f1`) and tagger (`call_f2`), both running. */
function fannedOut(maxBurst: number) {
  const machine = sessionMachine.provide({ actors: { managerTurn: never, workerTurn: never, toolCall: never } });
  const actor = createActor(machine, { input: { sessionId: 'fan-in', package: testingPackage, maxBurst } }).start();
  actor.send({ type: 'user_submitted_input', text: 'Otters.' });
  actor.send({ type: 'xstate.done.actor.managerTurn', output: managerReplies(testingPackage).fan_out_without_approval, actorId: 'managerTurn' } as never);
  expect(actor.getSnapshot().matches({ running: { team: 'working' } })).toBe(true);
  const reply = (item: string, output: TurnOutput) => actor.send({ type: `xstate.done.actor.branch:${item}`, output, actorId: `branch:${item}` } as never);
  return { actor, reply };
}

describe('the fan-in', () => {
  it('asks the user once the branches used up the burst, instead of another manager round', () => {
    // The manager's round is the burst's first, noter's reaches maxBurst 2 (it stops), tagger's goes past it (it stops too).
    const { actor, reply } = fannedOut(2);
    reply('call_f1', workerReplies(testingPackage, 'noter').no_calls!);
    reply('call_f2', workerReplies(testingPackage, 'tagger').no_calls!);
    const snapshot = actor.getSnapshot();
    expect(snapshot.value).toEqual({ waiting_user: 'input' });
    expect(snapshot.context.notice).toMatch(/used all 2 rounds/);
    expect(snapshot.context.team).toBeNull();
    actor.stop();
  });

  it("runs a held branch's approved call after an upgrade during the review", () => {
    const { actor, reply } = fannedOut(5);
    reply('call_f1', workerReplies(testingPackage, 'noter').tool_read!);
    reply('call_f2', workerReplies(testingPackage, 'tagger').submit!);
    expect(actor.getSnapshot().value).toEqual({ waiting_user: 'review_artifact' });
    const pkg = actor.getSnapshot().context.package!;
    const to = `sha256:${'0'.repeat(64)}`;
    actor.send({ type: 'package_upgraded', package: { ...pkg, version: to }, from: pkg.version ?? null, to });
    const [artifact] = actor.getSnapshot().context.artifacts;
    actor.send({ type: 'user_accepted_artifact', artifactId: artifact!.id });
    const snapshot = actor.getSnapshot();
    expect(snapshot.status).toBe('active');
    expect(snapshot.value).toEqual({ running: { worker: 'calling' } });
    expect((snapshot.children.toolCall?.getSnapshot() as { input?: { item: { callId: string } } }).input?.item.callId).toBe('call_t1');
    actor.stop();
  });
});
