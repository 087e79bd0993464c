/**
 * Model-based test of the session statechart (DESIGN §10), through the public testing kit:
 * `testAllTransitions` walks every shortest path with xstate/graph, replays each on a real
 * actor and compares the transitions taken with every transition the machine defines. It is
 * run on the default machine with the bundled `tiny` package, on its built-in test package,
 * and on a `provide()`d variant whose actors are different (and named differently in the
 * catalogue) — each must reach 100%.
 */
import { describe, expect, it } from 'vitest';
import { fromPromise } from 'xstate';
import { loadPackages, TransitionTestError } from '../../src/index.js';
import { callsOfWait } from '../../src/core/tools/server-tools.js';
import { sessionMachine, type PackageInfo, type SessionContext, type TurnOutput } from '../../src/machine.js';
import { managerReplies, sessionFacts, testAllTransitions, testingPackage, type TestAllTransitionsResult } from '../../src/testing.js';
import { InterruptSchema } from '@ag-ui/core/schemas';
import { answerOf, answerSchema, eventForAnswer, INTERRUPT_REASONS, interruptFor } from '../../src/protocols/ag-ui/interrupts.js';
import { TaskState, TaskStatus } from '@a2a-js/sdk';
import { statusOf } from '../../src/protocols/a2a/tasks.js';
import { UserEventSchema, type UserEventType } from '../../src/core/machines/session.events.js';
import { sessionView, type SessionView } from '../../src/core/view.js';
import type { SessionSnapshot } from '../../src/core/machines/session-snapshot.js';

function report(name: string, result: TestAllTransitionsResult): void {
  console.log(`transitions covered: ${result.covered}/${result.total} (${name}, ${result.paths.length} paths replayed)`);
  expect(result.uncovered, `transitions never taken:\n${result.uncovered.join('\n')}`).toEqual([]);
  expect(result.covered).toBe(result.total);
}

const { workers, id, title, description } = loadPackages().get('tiny')!;
const tiny: PackageInfo = { id, title, description, workers };

/** An answer an AG-UI client could send for each user event a wait declares. */
function sampleAnswer(type: UserEventType, view: SessionView): unknown {
  const questions = view.questions ?? view.artifact?.questions ?? [];
  const pendingCall = callsOfWait(view.toolCalls, view.waitingReason)[0]?.callId;
  const answers: Record<UserEventType, unknown> = {
    user_approved_next_step: { approved: true, reason: 'Do it the edited way.' },
    user_rejected_next_step: { approved: false, reason: 'Not now.' },
    user_accepted_artifact: { accepted: true, edits: { [view.artifact?.tags[0]?.tag ?? 'note']: 'Edited body.' } },
    user_rejected_artifact: { accepted: false, reason: 'Shorter.' },
    user_submitted_input: { text: 'More, please.' },
    user_confirmed_intake: { confirm: true },
    user_answered_questions: { answers: Object.fromEntries(questions.map((q) => [q.id, 'An answer.'])) },
    user_skipped_questions: { skip: true },
    user_selected_package: { packageId: 'tiny' },
    user_approved_tool_call: { callId: pendingCall, approved: true, arguments: { path: 'edited.md' } },
    user_rejected_tool_call: { callId: pendingCall, approved: false, reason: 'Not that file.' },
    user_answered_tool_input: { callId: pendingCall, responses: { confirm: { action: 'accept', content: { overwrite: true } }, login: { action: 'accept' } } },
    user_gave_tool_result: { callId: pendingCall, result: 'The note was written.' },
  };
  return answers[type];
}

/**
 * The walk of the default machine with `tiny` and every wait it passed through (by its facts, which
 * are sessionFacts' own). Two tests read it; the first to run makes it, as both would have made
 * the same walk (the walk is the most of this file's time).
 */
let tinyWalk: { result: TestAllTransitionsResult; waits: Map<string, SessionSnapshot> } | undefined;
function walkWithTiny(): { result: TestAllTransitionsResult; waits: Map<string, SessionSnapshot> } {
  if (tinyWalk) return tinyWalk;
  const waits = new Map<string, SessionSnapshot>();
  const result = testAllTransitions(sessionMachine, {
    package: tiny,
    facts: (snapshot) => {
      const facts = sessionFacts(snapshot);
      if (snapshot.status === 'active' && typeof snapshot.value === 'object' && 'waiting_user' in snapshot.value) waits.set(facts, snapshot);
      return facts;
    },
  });
  tinyWalk = { result, waits };
  return tinyWalk;
}

describe('session machine, model-based (testAllTransitions)', { timeout: 120_000 }, () => {
  it('gives every wait of the chart an AG-UI interrupt that fits the protocol (and the A2A input-required status that carries it), whose schema takes an answer for each event the wait declares', () => {
    const { result, waits } = walkWithTiny();
    expect(result.uncovered).toEqual([]);
    const reasons = new Set<string>();
    for (const snapshot of waits.values()) {
      const view = sessionView(snapshot);
      const interrupt = interruptFor(view, 'call_1');
      expect(InterruptSchema.safeParse(interrupt).success, view.state).toBe(true);
      expect(interrupt.reason).toBe(INTERRUPT_REASONS[view.waitingReason!]);
      expect(interrupt.toolCallId !== undefined).toBe(['approve_step', 'approve_tool', 'tool_input', 'tool_interrupted'].includes(view.waitingReason!));
      // The A2A view of the same wait: input-required, the same interrupt in a data part, and it survives the wire (JSON and back).
      const status = statusOf({ view, context: snapshot.context, interrupt, firstRequest: false, packageId: 'tiny' });
      expect(status.state, view.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
      const data = status.message?.parts.find((p) => p.content?.$case === 'data')?.content;
      expect(data?.$case === 'data' && data.value.interrupt).toEqual(interrupt);
      expect(TaskStatus.fromJSON(JSON.parse(JSON.stringify(TaskStatus.toJSON(status))))).toEqual(status);
      reasons.add(view.waitingReason!);
      for (const type of view.acceptedEvents) {
        const payload = sampleAnswer(type, view);
        expect(answerSchema(view).safeParse(payload).success, `${view.state} ${type}`).toBe(true);
        const answer = eventForAnswer(view, payload);
        if (!answer.ok) throw new Error(answer.message);
        expect(answer.event.type, view.state).toBe(type);
        expect(UserEventSchema.safeParse(answer.event).success).toBe(true);
        // What a resume sent twice is recognised by: the journalled event gives the payload back.
        expect(answerOf(answer.event as unknown as Record<string, unknown>)).toEqual(payload);
      }
      expect(answerSchema(view).safeParse({ unexpected: true }).success).toBe(false);
    }
    expect([...reasons].sort()).toEqual(Object.keys(INTERRUPT_REASONS).sort());
  });

  it('covers every transition of the default machine with the bundled tiny package', () => {
    const { result } = walkWithTiny();
    report('tiny', result);
    const reached = new Set(result.paths.map((p) => p.state));
    for (const state of [
      'waiting_user.skill_selection',
      'waiting_user.intake',
      'waiting_user.input',
      'waiting_user.approve_step',
      'waiting_user.review_artifact',
      'waiting_user.worker_questions',
      'waiting_user.revision',
      'waiting_user.approve_tool',
      'waiting_user.tool_input',
      'waiting_user.tool_interrupted',
      'running.manager.thinking',
      'running.worker.thinking',
      'running.worker.calling',
      'done',
    ]) {
      expect(reached, state).toContain(state);
    }
    expect(result.paths.length).toBeGreaterThan(100);
  });

  it('covers every transition with no arguments (the default machine and test package)', () => {
    report('defaults', testAllTransitions());
  });

  it('covers every transition of a provide()d machine with different actors', () => {
    // An app's own turns: the kit replaces them with inert actors, so they never run; the
    // replies offered come from the app's catalogue.
    let ran = 0;
    const appTurn = fromPromise<TurnOutput, SessionContext>(async () => {
      ran += 1;
      return { content: null, toolCalls: [] };
    });
    const app = sessionMachine.provide({ actors: { managerTurn: appTurn, workerTurn: appTurn } });
    const manager = Object.entries(managerReplies(testingPackage));
    const result = testAllTransitions(app, {
      maxBurst: 3,
      actorResults: { managerTurn: () => [...manager.map(([label, output]) => ({ output, label })), { error: new Error('app model down') }] },
    });
    report('provided', result);
    expect(ran).toBe(0);
  });

  it('reports what a variant leaves uncovered, and fails clearly on an actor it has no results for', () => {
    // Offering the manager only `finish`: most of the machine is never reached.
    const finishOnly = testAllTransitions(sessionMachine, {
      legacyCatalog: false,
      actorResults: { managerTurn: () => [{ output: managerReplies(testingPackage).finish, label: 'finish' }] },
    });
    expect(finishOnly.covered).toBeLessThan(finishOnly.total);
    expect(finishOnly.uncovered.length).toBe(finishOnly.total - finishOnly.covered);

    // No results for an invoked actor: the error names the option to pass.
    expect(() => testAllTransitions(sessionMachine, { legacyCatalog: false, actorResults: { managerTurn: undefined as never } })).toThrow(
      new TransitionTestError('the machine invokes "managerTurn", and no results are known for it: pass actorResults.managerTurn to testAllTransitions.'),
    );
  });
});
