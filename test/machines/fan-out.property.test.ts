/**
 * Property test of a fan-out on the pure chart: three independent workers, each approved or
 * not, finishing in any order (a submit, questions, or a failed model call), with the session
 * saved and reopened (the runtime's persisted form, validated) at any point, and decisions
 * naming right, wrong and already-decided items in any order. Whatever the order:
 *
 * - the blackboard ends the same: each approved worker that submitted wrote its tag once;
 * - no artifact is lost or duplicated: one per submission, each decided once;
 * - a decision changes only the item it names (an artifact's status, a step's), or nothing.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { getNextSnapshot, initialTransition, type EventObject } from 'xstate';

/** An event as the test sends it (the chart's own type is checked by the chart). */
type AnyEvent = EventObject & Record<string, unknown>;
import { hasBody } from '../../src/core/blackboard/blackboard.js';
import { stateString } from '../../src/core/machines/refusals.js';
import { sessionMachine } from '../../src/core/machines/session.machine.js';
import type { PackageInfo } from '../../src/core/machines/session.context.js';
import type { SessionSnapshot } from '../../src/core/machines/session-snapshot.js';
import { envelope, resolvedSnapshot } from '../../src/runtime/persisted.js';

const TRIO = ['north', 'south', 'east'] as const;
type Worker = (typeof TRIO)[number];
type Outcome = 'submit' | 'ask' | 'fail';

const trio: PackageInfo = {
  id: 'trio',
  title: 'Trio',
  description: 'Three notes at once.',
  workers: TRIO.map((id) => ({ id, title: id, description: `The ${id} note.`, inputTags: ['request'], outputTags: [id], roles: [] })),
};

const call = (name: string, args: unknown, id: string) => ({ id, type: 'function' as const, function: { name, arguments: JSON.stringify(args) } });
const replyOf = (outcome: Exclude<Outcome, 'fail'>, id: Worker) =>
  outcome === 'submit'
    ? { content: null, toolCalls: [call('submit', { outputs: { [id]: `The ${id} note.` } }, `submit_${id}`)] }
    : { content: null, toolCalls: [call('ask_user', { questions: [`Which ${id}?`] }, `ask_${id}`)] };

const step = (s: SessionSnapshot, event: AnyEvent): SessionSnapshot => getNextSnapshot(sessionMachine, s, event as never) as SessionSnapshot;
const state = (s: SessionSnapshot) => (s.status === 'done' ? 'done' : stateString(s.value));

/** Saved and reopened as the runtime does: JSON through the versioned envelope, validated, resolved. */
const reopened = (s: SessionSnapshot): SessionSnapshot =>
  resolvedSnapshot(sessionMachine, 'prop', JSON.parse(JSON.stringify(envelope(sessionMachine.getPersistedSnapshot(s)))));

const statusesOf = (s: SessionSnapshot) => Object.fromEntries(s.context.artifacts.map((a) => [a.id, a.status]));
const itemsOf = (s: SessionSnapshot) => Object.fromEntries((s.context.team?.branches ?? []).map((b) => [b.item, b.status]));

const scenario = fc.record({
  approval: fc.tuple(fc.boolean(), fc.boolean(), fc.boolean()),
  approve: fc.tuple(fc.boolean(), fc.boolean(), fc.boolean()),
  outcomes: fc.tuple(...TRIO.map(() => fc.constantFrom<Outcome>('submit', 'submit', 'ask', 'fail'))),
  order: fc.shuffledSubarray([0, 1, 2], { minLength: 3, maxLength: 3 }),
  decisionOrder: fc.shuffledSubarray([0, 1, 2], { minLength: 3, maxLength: 3 }),
  reopenAt: fc.integer({ min: 0, max: 12 }),
  noise: fc.array(fc.constantFrom('missing', 'unknown', 'again'), { maxLength: 4 }),
});

describe('a fan-out, in any order', () => {
  it('ends with the same blackboard; no artifact lost or duplicated; no decision applied to an item it did not name', () => {
    fc.assert(
      fc.property(scenario, ({ approval, approve, outcomes, order, decisionOrder, reopenAt, noise }) => {
        let moves = 0;
        let s = initialTransition(sessionMachine, { sessionId: 'prop', package: trio })[0] as SessionSnapshot;
        const send = (event: AnyEvent) => {
          if (moves++ === reopenAt) s = reopened(s);
          const before = s;
          s = step(s, event);
          return before;
        };
        send({ type: 'user_submitted_input', text: 'Notes.' });
        const fanOut = {
          content: null,
          toolCalls: TRIO.map((id, i) => call('run_worker', { workerId: id, reason: id, requiresApproval: approval[i] }, `run_${id}`)),
        };
        send({ type: 'xstate.done.actor.managerTurn', output: fanOut });

        // Step decisions: noise first (changes nothing), then each proposed item in the order drawn.
        if (state(s) === 'waiting_user.approve_step') {
          for (const n of noise) {
            const item = n === 'unknown' ? 'run_nowhere' : n === 'missing' ? undefined : null;
            if (item === null) continue;
            const before = send({ type: 'user_rejected_next_step', ...(item ? { item } : {}), wait: s.context.waits.opened });
            expect(itemsOf(s)).toEqual(itemsOf(before));
          }
          for (const i of decisionOrder) {
            const item = `run_${TRIO[i]}`;
            if (s.context.team?.branches.find((b) => b.item === item)?.status !== 'proposed') continue;
            const before = send({ type: approve[i] ? 'user_approved_next_step' : 'user_rejected_next_step', item });
            // Only the named item moved.
            const [was, now] = [itemsOf(before), itemsOf(s)];
            for (const other of Object.keys(was))
              if (other !== item && now[other] !== undefined)
                expect(now[other]).toBe(state(s) === 'running.team.working' && was[other] === 'approved' ? 'running' : was[other]);
            // A second decision on the item just decided changes nothing, whatever it says.
            if (noise.includes('again') && state(s) === 'waiting_user.approve_step') {
              const again = send({ type: approve[i] ? 'user_rejected_next_step' : 'user_approved_next_step', item });
              expect(itemsOf(s)).toEqual(itemsOf(again));
            }
          }
        }
        const ran = TRIO.filter((_, i) => !approval[i] || approve[i]);

        // The branches finish in the order drawn.
        for (const i of order) {
          const id = TRIO[i]!;
          if (!ran.includes(id) || state(s) !== 'running.team.working') continue;
          const outcome = outcomes[i]!;
          const actorId = `branch:run_${id}`;
          if (outcome === 'fail') send({ type: `xstate.error.actor.${actorId}`, error: new Error('down'), actorId });
          else send({ type: `xstate.done.actor.${actorId}`, output: replyOf(outcome, id), actorId });
        }

        // The fan-in: artifacts decided by id (noise names others), then each asked branch goes on alone.
        for (let guard = 0; guard < 30 && state(s) !== 'done' && !state(s).startsWith('running.manager'); guard++) {
          const now = state(s);
          if (now === 'waiting_user.review_artifact') {
            const pending = s.context.artifacts.filter((a) => a.status === 'pending_review');
            const decided = s.context.artifacts.find((a) => a.status !== 'pending_review');
            if (decided && guard % 3 === 1) {
              const before = send({ type: 'user_accepted_artifact', artifactId: decided.id });
              expect(statusesOf(s)).toEqual(statusesOf(before));
              continue;
            }
            const named = pending[0]!;
            // An artifact of the fan-in may be rejected (the manager hears why); one of a worker that went on alone is accepted here.
            const reject = guard % 2 === 1 && (s.context.team?.branches.some((x) => x.artifactId === named.id) ?? false);
            const before = send({ type: reject ? 'user_rejected_artifact' : 'user_accepted_artifact', artifactId: named.id });
            const [was, is] = [statusesOf(before), statusesOf(s)];
            for (const id of Object.keys(was)) if (id !== named.id) expect(is[id]).toBe(was[id]);
            expect(is[named.id]).not.toBe('pending_review');
          } else if (now === 'waiting_user.worker_questions') {
            send({ type: 'user_answered_questions', answers: Object.fromEntries((s.context.questions ?? []).map((q) => [q.id, 'This one.'])) });
          } else if (now === 'running.worker.thinking') {
            send({ type: 'xstate.done.actor.workerTurn', output: replyOf('submit', s.context.step!.workerId as Worker) });
          } else break;
        }
        expect(state(s)).toBe('running.manager.thinking');
        expect(s.context.team).toBeNull();

        // Every approved worker that did not fail wrote its tag once, with its own body.
        const wrote = TRIO.filter((id) => ran.includes(id) && outcomes[TRIO.indexOf(id)] !== 'fail');
        for (const id of TRIO) {
          const versions = (s.context.blackboard[id] ?? []).filter(hasBody);
          expect(versions.map((v) => [v.body, v.writtenBy])).toEqual(wrote.includes(id) ? [[`The ${id} note.`, id]] : []);
        }
        const byWorker = s.context.artifacts.map((a) => a.workerId).sort();
        expect(byWorker).toEqual([...wrote].sort());
        expect(new Set(s.context.artifacts.map((a) => a.id)).size).toBe(s.context.artifacts.length);
        expect(s.context.artifacts.every((a) => a.status === 'accepted' || a.status === 'rejected')).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});
