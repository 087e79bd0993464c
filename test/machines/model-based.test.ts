/**
 * Model-based test of the session statechart (DESIGN §10), through the public testing kit:
 * `testAllTransitions` walks every shortest path with xstate/graph, replays each on a real
 * actor and compares the transitions taken with every transition the machine defines. It is
 * run on the default machine with the bundled `tiny` package, on its built-in test package,
 * and on a `provide()`d variant whose actors are different (and named differently in the
 * catalogue) — each must reach 100%.
 */
import { describe, expect, it } from 'vitest';
import { assign, fromPromise } from 'xstate';
import { loadPackages, TransitionTestError } from '../../src/index.js';
import { callsOfWait } from '../../src/core/tools/server-tools.js';
import { sessionMachine, type PackageInfo, type SessionContext, type TurnOutput } from '../../src/machine.js';
import { managerReplies, sessionFacts, testAllTransitions, testingPackage, workerReplies, type TestAllTransitionsResult } from '../../src/testing.js';
import { InterruptSchema } from '@ag-ui/core/schemas';
import { answerOf, answerSchema, eventForAnswer, INTERRUPT_REASONS, interruptFor } from '../../src/protocols/ag-ui/interrupts.js';
import { TaskState, TaskStatus } from '@a2a-js/sdk';
import { statusOf } from '../../src/protocols/a2a/tasks.js';
import { UserEventSchema, type UserEventType } from '../../src/core/machines/session.events.js';
import { sessionView, type SessionView } from '../../src/core/view.js';
import type { SessionSnapshot } from '../../src/core/machines/session-snapshot.js';
import * as team from '../../src/core/machines/team.js';
import { isSpecType } from '@modelcontextprotocol/server';
import { formsFor, toolInputAnswer, type FormResponse } from '../../src/protocols/mcp/forms.js';

/** Every step of the fan-out that waits, approved (what only a person may do). */
const approveAll = (context: SessionContext): Partial<SessionContext> =>
  team
    .branchesIn(context, 'proposed')
    .reduce<Partial<SessionContext>>((done, b) => ({ ...done, ...team.approveTeamStep({ ...context, ...done }, b.item, undefined) }), {});

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
 * What a host's person fills in for `payload`, the answer an AG-UI client would send: its fields
 * as the form has them (nested ones as `parent.field`, a call's arguments as JSON text); the
 * call or item it is for is the form's own.
 */
function formContent(payload: Record<string, unknown>): Record<string, unknown> {
  const content: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(payload)) {
    if (key === 'callId' || key === 'item' || key === 'artifactId') continue;
    if (key === 'arguments') content[key] = JSON.stringify(value);
    else if (value !== null && typeof value === 'object') for (const [inner, v] of Object.entries(value)) content[`${key}.${inner}`] = v;
    else content[key] = value;
  }
  return content;
}

/** The walk with no arguments (the default machine and the test package, whose workers may fan out); two tests read it. */
let defaultsWalk: TestAllTransitionsResult | undefined;
const walkWithDefaults = (): TestAllTransitionsResult => (defaultsWalk ??= testAllTransitions());

/**
 * `tiny`'s two workers are chained (summarize reads echo's note), so the manager can never run
 * them at once: its walk covers every transition but those only a fan-out reaches. Each of those
 * must be one the test package's walk takes only after a fan-out, and takes: a transition no
 * walk covers, or one the tiny walk should cover and does not, fails.
 */
function expectTinyCoversAllButFanOut(tinyResult: TestAllTransitionsResult): void {
  const defaults = walkWithDefaults();
  const afterFanOut = new Set(defaults.onlyAfterFanOut);
  const coveredByDefaults = new Set(defaults.uncovered);
  const missed = tinyResult.uncovered.filter((t) => !afterFanOut.has(t));
  expect(missed, `transitions the tiny walk never takes, though the test package's walk takes them without a fan-out:\n${missed.join('\n')}`).toEqual([]);
  const nowhere = tinyResult.uncovered.filter((t) => coveredByDefaults.has(t));
  expect(nowhere, `transitions no walk takes:\n${nowhere.join('\n')}`).toEqual([]);
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
    expectTinyCoversAllButFanOut(result);
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

  it('gives every wait of the chart MCP elicitation forms the protocol takes, whose content comes back as each event the wait declares', () => {
    const { waits } = walkWithTiny();
    const reasons = new Set<string>();
    for (const snapshot of waits.values()) {
      const view = sessionView(snapshot);
      const forms = formsFor(view);
      expect(forms.length, view.state).toBeGreaterThan(0);
      for (const form of forms) {
        const params = form.request.params as { mode?: string; requestedSchema?: { properties: Record<string, unknown> } };
        // The call or item a form is for is its interrupt's: never a field a person could type another into.
        for (const target of ['callId', 'item', 'artifactId']) expect(params.requestedSchema?.properties ?? {}, view.state).not.toHaveProperty(target);
        // A URL request of the 2026-07-28 protocol has no elicitationId (the request state correlates it): the 2025 schema wants one.
        if (params.mode === 'url') expect(params, view.state).toMatchObject({ message: expect.any(String), url: expect.any(String) });
        else expect(isSpecType.ElicitRequest(form.request), `${view.state}: ${JSON.stringify(form.request)}`).toBe(true);
      }
      reasons.add(view.waitingReason!);
      const asked = (view.questions ?? view.artifact?.questions ?? []).length > 0;
      for (const type of view.acceptedEvents) {
        // With no question asked, a form offers no answers to questions (nor skipping them).
        if (!asked && (type === 'user_answered_questions' || type === 'user_skipped_questions')) continue;
        const payload = sampleAnswer(type, view) as Record<string, unknown>;
        let answered: unknown;
        if (view.waitingReason === 'tool_input') {
          // The server's own forms, one per key: every response goes back to it as it was given.
          const responses = new Map(
            Object.entries(payload.responses as Record<string, FormResponse>).map(([key, r]) => [`${forms[0]!.interruptId.split(':')[0]}:${key}`, r]),
          );
          const answer = toolInputAnswer(view, responses);
          if (!answer.ok) throw new Error(`${view.state}: missing ${answer.missing.join(', ')}`);
          answered = answer.payload;
        } else {
          const answer = forms[0]!.answerOf(formContent(payload));
          if (!answer.ok) throw new Error(`${view.state} ${type}: ${answer.message}`);
          answered = answer.payload;
        }
        const event = eventForAnswer(view, answered);
        if (!event.ok) throw new Error(`${view.state} ${type}: ${event.message}`);
        expect(event.event.type, `${view.state} ${type}`).toBe(type);
        expect(answerOf(event.event as unknown as Record<string, unknown>), `${view.state} ${type}`).toEqual(payload);
      }
    }
    expect([...reasons].sort()).toEqual(Object.keys(INTERRUPT_REASONS).sort());
  });

  it('covers every transition of the default machine with the bundled tiny package but those only a fan-out reaches, which the test package covers', () => {
    const { result } = walkWithTiny();
    console.log(
      `transitions covered: ${result.covered}/${result.total} (tiny, ${result.paths.length} paths replayed; ` +
        `the other ${result.uncovered.length} only a fan-out reaches, covered by the test package's walk)`,
    );
    expectTinyCoversAllButFanOut(result);
    // A fan-out is out of tiny's reach: what it leaves is the fan-out's, and there is some.
    expect(result.uncovered.length).toBeGreaterThan(0);
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
    const result = walkWithDefaults();
    report('defaults', result);
    // The test package's third worker lets the manager fan out: the walk goes through the team.
    expect(result.onlyAfterFanOut.length).toBeGreaterThan(0);
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

  describe('fails on a chart that breaks an invariant of the fan-out or of the burst', () => {
    // The manager only fans out (each step waiting for a person) or finishes, and a worker only submits: a small walk through the team.
    const fanOutOnly = {
      legacyCatalog: false,
      actorResults: {
        managerTurn: () => [
          { output: managerReplies(testingPackage).fan_out_with_approval, label: 'fan_out_with_approval' },
          { output: managerReplies(testingPackage).finish, label: 'finish' },
        ],
        workerTurn: () => [{ output: workerReplies(testingPackage, 'noter').submit, label: 'submit' }],
      },
    };

    it('a deadline that approves the steps of a fan-out', () => {
      const approving = sessionMachine.provide({
        actions: { expireTeamSteps: assign(({ context }) => team.startBranches({ ...context, ...approveAll(context) })) },
      });
      expect(() => testAllTransitions(approving, fanOutOnly)).toThrow(/deadline_passed approved step call_f\d of the fan-out without a person/);
    });

    it('branches marked running whose rounds never start', () => {
      const idle = sessionMachine.provide({ actions: { startBranches: assign(({ context }) => team.startBranches(context)) } });
      expect(() => testAllTransitions(idle, fanOutOnly)).toThrow(/branch call_f\d runs, yet no actor runs its round/);
    });

    it('a model round past the burst', () => {
      const unlimited = sessionMachine.provide({ guards: { burstUsedUp: () => false } });
      const loops = {
        legacyCatalog: false,
        actorResults: { managerTurn: () => [{ output: managerReplies(testingPackage).list_workers, label: 'list_workers' }] },
      };
      expect(() => testAllTransitions(unlimited, loops)).toThrow(/a model round started in running\.\w+\.thinking with the burst used up/);
    });
  });
});
