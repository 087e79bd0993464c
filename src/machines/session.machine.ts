/**
 * The session statechart — the table of contents of Steward.
 *
 *   session
 *   ├── start                  (transient: a session without a package takes the legacy path)
 *   ├── waiting_user
 *   │   ├── skill_selection    legacy: choose a package
 *   │   ├── intake             the first request; the manager may clarify before it is confirmed
 *   │   ├── input              free input; may carry an assessment and a skippable question card
 *   │   ├── approve_step       a proposed run_worker waits for approve / reject
 *   │   ├── review_artifact    a worker's artifact waits for accept / reject (+ questions)
 *   │   ├── worker_questions   a worker asked before producing anything
 *   │   └── revision           after a reject: the user describes the changes wanted
 *   ├── running
 *   │   ├── manager            thinking (one LLM round; its onDone checks the reply's first call, by rule,
 *   │   │                      and leads where a one-call reply goes) → checking (the calls after the first)
 *   │   └── worker             thinking → checking
 *   └── done
 *
 * Every guard, action and actor is named here, so the inspector shows the names and
 * `sessionMachine.provide()` swaps them (the runtime provides the real manager and worker
 * turns). The seed's validation rules live in one table (rules.ts): every refusal edge (a
 * turn's onDone, `checking`) is the guard `breaksRule` with params `{ actor, rule }`, rule 6 is `burstUsedUp`,
 * the token budget `burstTokensWithinBudget` (manager: the next round) / `burstTokensUsedUp`
 * (worker: the next call);
 * the guards on user events (hasRequest, …) come with their refusal messages from the same
 * file. No guard is wrapped in `not(...)`, so the Stately tools show every one by name.
 */
import { assertEvent, assign, enqueueActions, fromPromise, setup, stateIn, type AnyStateMachine } from 'xstate';
import { UserError } from '../errors.js';
import { findTool, type ToolActor } from '../tools/schemas.js';
import { ancestry, leafNodes, readChart } from './refusals.js';
import { EVENT_GUARDS, violationOf, type RuleId } from './rules.js';
import { DEFAULT_MAX_BURST, NO_LEDGER, NO_REPLY, type Boundary, type SessionContext, type SessionInput, type TurnOutput } from './session.context.js';
import type { UserEvent } from './session.events.js';
import * as update from './session.updates.js';
import { initialTranscripts } from './transcript.js';

type DoneTurn = { type: `xstate.done.actor.${'managerTurn' | 'workerTurn'}`; output: TurnOutput };
type ErrorTurn = { type: `xstate.error.actor.${'managerTurn' | 'workerTurn'}`; error: unknown };
type SessionEvent = UserEvent | DoneTurn | ErrorTurn;

/**
 * `{ reply: 'arrived' }`: the guard is on a turn's onDone edge, so it reads the reply that
 * just arrived, as the edge's accept action will take it (XState evaluates guards before
 * actions). Without it, the guard reads the context (the `checking` edges, for the calls after
 * the first).
 */
type Arrived = { reply?: 'arrived' };
type RuleParams = { actor: ToolActor; rule: RuleId } & Arrived;

/**
 * The context a reply guard reads: with `{ reply: 'arrived' }` (a turn's onDone edge), the
 * context with the turn's reply accepted; else the context itself. Exported for apps that
 * swap a reply guard with `provide()`: such a guard must read `replyGuardContext(context,
 * event, params)`, not `context`, or on the onDone edges it sees the reply before this one.
 */
export function replyGuardContext(context: SessionContext, event: { type: string; output?: unknown }, params: Arrived | undefined): SessionContext {
  if (params?.reply !== 'arrived') return context;
  if (event.type === 'xstate.done.actor.managerTurn') return update.withArrivedReply(context, 'manager', event.output as TurnOutput);
  if (event.type === 'xstate.done.actor.workerTurn') return update.withArrivedReply(context, 'worker', event.output as TurnOutput);
  return context;
}

const headKind = (context: SessionContext) => {
  const head = context.reply.queue[0];
  return head && findTool('manager', head.call.function.name)?.kind;
};

/**
 * Where the reply leads once its last call is settled: the boundary tool chosen earlier in the
 * reply, or the last call itself when it is a boundary tool (it passed the rules by then, since
 * the refusals come first). Null while more than one call waits.
 */
function settledBoundary(context: SessionContext): Boundary | null {
  if (context.reply.queue.length > 1) return null;
  if (context.reply.boundary || headKind(context) !== 'boundary') return context.reply.boundary;
  return update.boundaryOf(context.reply.queue[0]!);
}

const isUserTurn = (boundary: SessionContext['reply']['boundary']) => boundary?.tool === 'ask_user' || boundary?.tool === 'review_blackboard';

/** A user event's time, when the runtime stamped one (a bare machine's events may carry none). */
const stampOf = (event: object) => ('at' in event && typeof event.at === 'string' ? { at: event.at } : {});

/** A user event for the event guards; other events (none reach them) carry no payload they read. */
const asUserEvent = (event: SessionEvent): UserEvent | null => (event.type.startsWith('user_') ? (event as UserEvent) : null);

const turnNotProvided = (name: string) =>
  fromPromise<TurnOutput, SessionContext>(async () => {
    throw new UserError(`No ${name} actor: create sessions with createRuntime({ model }), or provide one with sessionMachine.provide({ actors: { ${name} } }).`);
  });

let chart: AnyStateMachine;

// The leaves of the chart, for finding the active state with `stateIn` in the wildcard's action.
const leavesCache = new WeakMap<AnyStateMachine, ReturnType<typeof leafNodes>>();
const leavesOf = (machine: AnyStateMachine) => {
  let leaves = leavesCache.get(machine);
  if (!leaves) leavesCache.set(machine, (leaves = leafNodes(machine)));
  return leaves;
};

export const sessionMachine = setup({
  types: {
    context: {} as SessionContext,
    input: {} as SessionInput,
    events: {} as SessionEvent,
  },
  actors: {
    managerTurn: turnNotProvided('managerTurn'),
    workerTurn: turnNotProvided('workerTurn'),
  },
  guards: {
    hasPackage: ({ context }) => context.package !== null,
    // The guards on user events and their refusal messages: EVENT_GUARDS (rules.ts).
    packageIsKnown: ({ context, event }) => EVENT_GUARDS.packageIsKnown.refusal(context, asUserEvent(event)) === null,
    hasRequest: ({ context, event }) => EVENT_GUARDS.hasRequest.refusal(context, asUserEvent(event)) === null,
    hasQuestionCard: ({ context, event }) => EVENT_GUARDS.hasQuestionCard.refusal(context, asUserEvent(event)) === null,
    isArtifactUnderReview: ({ context, event }) => EVENT_GUARDS.isArtifactUnderReview.refusal(context, asUserEvent(event)) === null,
    editedRoleIsWorkers: ({ context, event }) => EVENT_GUARDS.editedRoleIsWorkers.refusal(context, asUserEvent(event)) === null,
    editsWithinArtifactTags: ({ context, event }) => EVENT_GUARDS.editsWithinArtifactTags.refusal(context, asUserEvent(event)) === null,

    // The rule table (rules.ts), checked on the head of the tool-call queue.
    breaksRule: ({ context, event }, params: RuleParams) => violationOf(replyGuardContext(context, event, params), params.actor, params.rule) !== null,
    burstUsedUp: ({ context, event }, params?: Arrived) => violationOf(replyGuardContext(context, event, params), 'manager', 'burstWithinLimit') !== null,
    // The token budget (maxBurstTokens), checked before each model call: the manager's next
    // round goes on only within it; a worker's next call is stopped when it is used up.
    burstTokensWithinBudget: ({ context, event }, params?: Arrived) => violationOf(replyGuardContext(context, event, params), 'manager', 'burstTokensWithinBudget') === null,
    burstTokensUsedUp: ({ context }) => violationOf(context, 'worker', 'burstTokensWithinBudget') !== null,

    moreCallsQueued: ({ context, event }, params?: Arrived) => replyGuardContext(context, event, params).reply.queue.length > 1,

    // Where a reply leads, once its last call is settled.
    choseApprovalStep: ({ context, event }, params?: Arrived) => {
      const boundary = settledBoundary(replyGuardContext(context, event, params));
      return boundary?.tool === 'run_worker' && boundary.step.requiresApproval;
    },
    choseWorkerRun: ({ context, event }, params?: Arrived) => settledBoundary(replyGuardContext(context, event, params))?.tool === 'run_worker',
    choseClarification: ({ context, event }, params?: Arrived) => {
      const checked = replyGuardContext(context, event, params);
      return !checked.intakeConfirmed && isUserTurn(settledBoundary(checked));
    },
    choseUserTurn: ({ context, event }, params?: Arrived) => isUserTurn(settledBoundary(replyGuardContext(context, event, params))),
    choseFinish: ({ context, event }, params?: Arrived) => settledBoundary(replyGuardContext(context, event, params))?.tool === 'finish',
    workerSubmitted: ({ context, event }, params?: Arrived) => {
      const { reply } = replyGuardContext(context, event, params);
      return reply.queue.length <= 1 && (reply.workerChoice.outputs !== undefined || reply.queue[0]?.call.function.name === 'submit');
    },
    workerAsked: ({ context, event }, params?: Arrived) => {
      const { reply } = replyGuardContext(context, event, params);
      return reply.queue.length <= 1 && (reply.workerChoice.questions !== undefined || reply.queue[0]?.call.function.name === 'ask_user');
    },
  },
  actions: {
    selectPackage: assign(({ context, event }) => {
      assertEvent(event, 'user_selected_package');
      return { package: context.catalog.find((p) => p.id === event.packageId) ?? null, catalog: [] };
    }),
    resetBurst: assign(({ context }) => update.resetBurst(context)),
    recordRequest: assign(({ context, event }) => {
      assertEvent(event, 'user_submitted_input');
      return update.recordRequest(context, event.text, event.at, event.by);
    }),
    confirmIntake: assign(({ context }) => update.confirmIntake(context)),
    recordUserInput: assign(({ context, event }) => {
      assertEvent(event, 'user_submitted_input');
      return update.recordUserInput(context, event.text, event.at, event.by);
    }),
    recordRequestAnswers: assign(({ context, event }) => {
      assertEvent(event, 'user_answered_questions');
      return update.recordRequestAnswers(context, event.answers, event.at, event.by);
    }),
    giveManagerAnswers: assign(({ context, event }) => {
      assertEvent(event, ['user_answered_questions', 'user_skipped_questions']);
      return update.recordAnswers(context, 'manager', event.type === 'user_answered_questions' ? event.answers : null);
    }),
    giveWorkerAnswers: assign(({ context, event }) => {
      assertEvent(event, ['user_answered_questions', 'user_skipped_questions']);
      return update.recordAnswers(context, 'worker', event.type === 'user_answered_questions' ? event.answers : null);
    }),
    tellManagerStepRejected: assign(({ context, event }) => {
      assertEvent(event, 'user_rejected_next_step');
      return update.tellManagerStepRejected(context, event.reason);
    }),
    /** The step as approved: the user's edits (if any) applied, the manager's call answered. */
    approveStep: assign(({ context, event }) => {
      assertEvent(event, 'user_approved_next_step');
      return update.approveStep(context, event.edits, event.by);
    }),
    acceptArtifact: assign(({ context, event }) => {
      assertEvent(event, 'user_accepted_artifact');
      return update.acceptArtifact(context, event.artifactId, event.edits, event.at, event.by);
    }),
    rejectArtifact: assign(({ context, event }) => {
      assertEvent(event, 'user_rejected_artifact');
      return update.rejectArtifact(context, event.artifactId, event.reason);
    }),
    startRevision: assign(({ context, event }) => {
      assertEvent(event, 'user_submitted_input');
      return update.startRevision(context, event.text);
    }),

    /** A worker reply with no call to check: into the transcript (with a nudge), and the round counted. */
    acceptWorkerReply: assign(({ context, event }) => {
      assertEvent(event, 'xstate.done.actor.workerTurn');
      return update.acceptArrivedReply(context, 'worker', event.output);
    }),
    /**
     * A turn's reply accepted (into the transcript, the round and its tokens counted, its calls
     * queued) and its first call settled, in one assign: one snapshot instead of two on the
     * edge every round takes (XState copies the snapshot per assign).
     */
    acceptAndSettleFirstCall: assign(({ context, event }, { actor }: { actor: ToolActor }) => {
      assertEvent(event, ['xstate.done.actor.managerTurn', 'xstate.done.actor.workerTurn']);
      const accepted = update.withArrivedReply(context, actor, event.output);
      return { ...update.acceptArrivedReply(context, actor, event.output), ...(actor === 'manager' ? update.settleCall(accepted) : update.settleWorkerCall(accepted)) };
    }),
    /** A turn's reply accepted, and its first call refused for breaking `rule`: its tool result is the rule's message. */
    acceptAndRefuseFirstCall: assign(({ context, event }, { actor, rule }: RuleParams) => {
      assertEvent(event, ['xstate.done.actor.managerTurn', 'xstate.done.actor.workerTurn']);
      const accepted = update.withArrivedReply(context, actor, event.output);
      const violation = violationOf(accepted, actor, rule);
      if (!violation) throw new Error(`acceptAndRefuseFirstCall ran although ${rule} holds (a bug in Steward: it belongs on a breaksRule transition).`);
      return { ...update.acceptArrivedReply(context, actor, event.output), ...update.refuseCall(accepted, actor, violation.message) };
    }),
    /** The call at the head of the queue broke `rule`: its tool result is the rule's message. */
    refuseCall: assign(({ context }, { actor, rule }: RuleParams) => {
      const violation = violationOf(context, actor, rule);
      if (!violation) throw new Error(`refuseCall ran although ${rule} holds (a bug in Steward: it belongs on a breaksRule transition).`);
      return update.refuseCall(context, actor, violation.message);
    }),
    /** Runs a loop tool, or takes a boundary tool as the reply's choice (no-op on an empty queue). */
    settleCall: assign(({ context }) => update.settleCall(context)),
    /** Takes a submit or ask_user as the worker's choice (no-op on an empty queue). */
    settleWorkerCall: assign(({ context }) => update.settleWorkerCall(context)),

    proposeStep: assign(({ context }) => update.takeStep(context)),
    showManagerMessage: assign(({ context }) => update.showManagerMessage(context)),
    startWorkerRun: assign(({ context }) => ({ ...update.startWorkerConversation(context), intakeConfirmed: true })),
    publishArtifact: assign(({ context }) => update.publishArtifact(context)),
    askWorkerQuestions: assign(({ context }) => update.askWorkerQuestions(context)),
    noticeBurstLimit: assign(({ context }) => update.noticeBurstLimit(context)),
    noticeWorkerBurstLimit: assign(({ context }) => update.noticeWorkerBurstLimit(context)),
    noticeTokenBudget: assign(({ context }) => update.noticeTokenBudget(context)),
    noticeWorkerTokenBudget: assign(({ context }) => update.noticeWorkerTokenBudget(context)),
    noticeManagerFailure: assign(({ event }) => {
      assertEvent(event, 'xstate.error.actor.managerTurn');
      return update.noticeModelFailure('manager', event.error);
    }),
    noticeWorkerFailure: assign(({ context, event }) => {
      assertEvent(event, 'xstate.error.actor.workerTurn');
      return update.noticeWorkerFailure(context, event.error);
    }),

    /**
     * Root wildcard: an event no active state takes is recorded with its reason, never
     * dropped. The active state is found with `stateIn` (actions see no snapshot), so this
     * works the same under a pure `transition()` as in a running actor.
     */
    recordRejection: enqueueActions(({ context, event, check, enqueue }) => {
      const leaf = leavesOf(chart).find((node) => check(stateIn(`#${node.id}`) as Parameters<typeof check>[0]));
      const { refusal } = readChart(leaf ? ancestry(leaf) : null, context, event);
      // Reached only when no transition took the event: a reading that finds one that would
      // (a guard outside the table, via provide()) still records the refusal, in general words.
      const reason = refusal?.reason ?? `"${event.type}" was refused by a guard.`;
      const state = refusal?.state ?? (leaf ? leaf.path.join('.') : 'done');
      enqueue.assign(update.recordRejection(context, { type: event.type, state, reason, ...stampOf(event) }));
    }),
  },
}).createMachine({
  id: 'session',
  context: ({ input }) => ({
    sessionId: input.sessionId,
    package: input.package ?? null,
    catalog: input.catalog ?? [],
    maxBurst: input.maxBurst ?? DEFAULT_MAX_BURST,
    burst: 0,
    intakeConfirmed: false,
    transcripts: initialTranscripts(input.window),
    reply: NO_REPLY,
    step: null,
    blackboard: input.blackboard ?? {},
    artifacts: [],
    questions: null,
    message: null,
    assessment: null,
    notice: null,
    rejections: [],
    rounds: 0,
    ledger: { ...NO_LEDGER, maxBurstTokens: input.maxBurstTokens ?? null },
  }),
  initial: 'start',
  on: {
    '*': { actions: 'recordRejection' },
  },
  states: {
    start: {
      always: [
        { guard: 'hasPackage', target: 'waiting_user.intake' },
        { target: 'waiting_user.skill_selection' },
      ],
    },

    waiting_user: {
      initial: 'input',
      states: {
        skill_selection: {
          on: {
            user_selected_package: { guard: 'packageIsKnown', target: 'intake', actions: 'selectPackage' },
          },
        },
        intake: {
          on: {
            user_submitted_input: { target: '#session.running.manager', actions: ['resetBurst', 'recordRequest'] },
            user_confirmed_intake: { guard: 'hasRequest', target: '#session.running.manager', actions: ['resetBurst', 'confirmIntake'] },
            // A clarification card: its answers become part of the request.
            user_answered_questions: { guard: 'hasQuestionCard', target: '#session.running.manager', actions: ['resetBurst', 'recordRequestAnswers'] },
            user_skipped_questions: { guard: 'hasQuestionCard', target: '#session.running.manager', actions: ['resetBurst', 'giveManagerAnswers'] },
          },
        },
        input: {
          on: {
            user_submitted_input: { target: '#session.running.manager', actions: ['resetBurst', 'recordUserInput'] },
            user_answered_questions: { guard: 'hasQuestionCard', target: '#session.running.manager', actions: ['resetBurst', 'giveManagerAnswers'] },
            user_skipped_questions: { guard: 'hasQuestionCard', target: '#session.running.manager', actions: ['resetBurst', 'giveManagerAnswers'] },
          },
        },
        approve_step: {
          on: {
            user_approved_next_step: { guard: 'editedRoleIsWorkers', target: '#session.running.worker', actions: ['resetBurst', 'approveStep', 'startWorkerRun'] },
            user_rejected_next_step: { target: '#session.running.manager', actions: ['resetBurst', 'tellManagerStepRejected'] },
          },
        },
        review_artifact: {
          on: {
            user_accepted_artifact: { guard: 'editsWithinArtifactTags', target: '#session.running.manager', actions: ['resetBurst', 'acceptArtifact'] },
            user_rejected_artifact: { guard: 'isArtifactUnderReview', target: 'revision', actions: ['resetBurst', 'rejectArtifact'] },
          },
        },
        worker_questions: {
          on: {
            user_answered_questions: { target: '#session.running.worker', actions: ['resetBurst', 'giveWorkerAnswers'] },
            user_skipped_questions: { target: '#session.running.worker', actions: ['resetBurst', 'giveWorkerAnswers'] },
          },
        },
        revision: {
          on: {
            user_submitted_input: { target: '#session.running.worker', actions: ['resetBurst', 'startRevision'] },
          },
        },
      },
    },

    running: {
      initial: 'manager',
      states: {
        manager: {
          initial: 'thinking',
          states: {
            thinking: {
              invoke: {
                id: 'managerTurn',
                src: 'managerTurn',
                input: ({ context }) => context,
                // The reply's first call is checked on these edges, against the rules in
                // CALL_RULE_ORDER (rules.ts: the seed's order, rule 5 before 2 so that a passed
                // inputTags gets its own message; one-boundary-per-reply cannot refuse a first
                // call): refused or settled, and where a one-call reply (the common case)
                // leads, in one step. The guards read the reply as the edge's action will take
                // it ({ reply: 'arrived' }). The calls after the first: `checking`.
                onDone: [
                  { guard: { type: 'breaksRule', params: { actor: 'manager', rule: 'actorMayUseTool', reply: 'arrived' } }, target: 'checking', actions: { type: 'acceptAndRefuseFirstCall', params: { actor: 'manager', rule: 'actorMayUseTool' } } },
                  { guard: { type: 'breaksRule', params: { actor: 'manager', rule: 'managerOmitsTagLists', reply: 'arrived' } }, target: 'checking', actions: { type: 'acceptAndRefuseFirstCall', params: { actor: 'manager', rule: 'managerOmitsTagLists' } } },
                  { guard: { type: 'breaksRule', params: { actor: 'manager', rule: 'argumentsMatchSchema', reply: 'arrived' } }, target: 'checking', actions: { type: 'acceptAndRefuseFirstCall', params: { actor: 'manager', rule: 'argumentsMatchSchema' } } },
                  { guard: { type: 'breaksRule', params: { actor: 'manager', rule: 'workerIsRegistered', reply: 'arrived' } }, target: 'checking', actions: { type: 'acceptAndRefuseFirstCall', params: { actor: 'manager', rule: 'workerIsRegistered' } } },
                  { guard: { type: 'moreCallsQueued', params: { reply: 'arrived' } }, target: 'checking', actions: { type: 'acceptAndSettleFirstCall', params: { actor: 'manager' } } },
                  { guard: { type: 'choseApprovalStep', params: { reply: 'arrived' } }, target: '#session.waiting_user.approve_step', actions: [{ type: 'acceptAndSettleFirstCall', params: { actor: 'manager' } }, 'proposeStep'] },
                  { guard: { type: 'choseWorkerRun', params: { reply: 'arrived' } }, target: '#session.running.worker', actions: [{ type: 'acceptAndSettleFirstCall', params: { actor: 'manager' } }, 'proposeStep', 'startWorkerRun'] },
                  { guard: { type: 'choseClarification', params: { reply: 'arrived' } }, target: '#session.waiting_user.intake', actions: [{ type: 'acceptAndSettleFirstCall', params: { actor: 'manager' } }, 'showManagerMessage'] },
                  { guard: { type: 'choseUserTurn', params: { reply: 'arrived' } }, target: '#session.waiting_user.input', actions: [{ type: 'acceptAndSettleFirstCall', params: { actor: 'manager' } }, 'showManagerMessage'] },
                  { guard: { type: 'choseFinish', params: { reply: 'arrived' } }, target: '#session.done', actions: [{ type: 'acceptAndSettleFirstCall', params: { actor: 'manager' } }, 'showManagerMessage'] },
                  { guard: { type: 'burstUsedUp', params: { reply: 'arrived' } }, target: '#session.waiting_user.input', actions: [{ type: 'acceptAndSettleFirstCall', params: { actor: 'manager' } }, 'noticeBurstLimit'] },
                  // A loop tool: the next round, its actor started anew.
                  { guard: { type: 'burstTokensWithinBudget', params: { reply: 'arrived' } }, target: 'thinking', reenter: true, actions: { type: 'acceptAndSettleFirstCall', params: { actor: 'manager' } } },
                  { target: '#session.waiting_user.input', actions: [{ type: 'acceptAndSettleFirstCall', params: { actor: 'manager' } }, 'noticeTokenBudget'] },
                ],
                onError: { target: '#session.waiting_user.input', actions: 'noticeManagerFailure' },
              },
            },
            // The calls after the first (a reply's first call refused, or more than one call):
            // each pass checks the head of the queue by the same rules, in the same order, and
            // refuses or settles it; the last call is settled on the transition that leaves.
            checking: {
              always: [
                { guard: { type: 'breaksRule', params: { actor: 'manager', rule: 'actorMayUseTool' } }, actions: { type: 'refuseCall', params: { actor: 'manager', rule: 'actorMayUseTool' } } },
                { guard: { type: 'breaksRule', params: { actor: 'manager', rule: 'managerOmitsTagLists' } }, actions: { type: 'refuseCall', params: { actor: 'manager', rule: 'managerOmitsTagLists' } } },
                { guard: { type: 'breaksRule', params: { actor: 'manager', rule: 'argumentsMatchSchema' } }, actions: { type: 'refuseCall', params: { actor: 'manager', rule: 'argumentsMatchSchema' } } },
                { guard: { type: 'breaksRule', params: { actor: 'manager', rule: 'workerIsRegistered' } }, actions: { type: 'refuseCall', params: { actor: 'manager', rule: 'workerIsRegistered' } } },
                { guard: { type: 'breaksRule', params: { actor: 'manager', rule: 'oneBoundaryPerReply' } }, actions: { type: 'refuseCall', params: { actor: 'manager', rule: 'oneBoundaryPerReply' } } },
                { guard: 'moreCallsQueued', actions: 'settleCall' },
                { guard: 'choseApprovalStep', target: '#session.waiting_user.approve_step', actions: ['settleCall', 'proposeStep'] },
                { guard: 'choseWorkerRun', target: '#session.running.worker', actions: ['settleCall', 'proposeStep', 'startWorkerRun'] },
                { guard: 'choseClarification', target: '#session.waiting_user.intake', actions: ['settleCall', 'showManagerMessage'] },
                { guard: 'choseUserTurn', target: '#session.waiting_user.input', actions: ['settleCall', 'showManagerMessage'] },
                { guard: 'choseFinish', target: '#session.done', actions: ['settleCall', 'showManagerMessage'] },
                // Only loop tools (or refused calls) in this reply: the burst goes on — unless it
                // is used up (rule 6), checked here because only this edge starts another round.
                { guard: 'burstUsedUp', target: '#session.waiting_user.input', actions: ['settleCall', 'noticeBurstLimit'] },
                { guard: 'burstTokensWithinBudget', target: 'thinking', actions: 'settleCall' },
                { target: '#session.waiting_user.input', actions: ['settleCall', 'noticeTokenBudget'] },
              ],
            },
          },
        },

        worker: {
          initial: 'thinking',
          states: {
            thinking: {
              always: [
                { guard: 'burstUsedUp', target: '#session.waiting_user.input', actions: 'noticeWorkerBurstLimit' },
                { guard: 'burstTokensUsedUp', target: '#session.waiting_user.input', actions: 'noticeWorkerTokenBudget' },
              ],
              invoke: {
                id: 'workerTurn',
                src: 'workerTurn',
                input: ({ context }) => context,
                // As the manager's: the first call checked here, the others in `checking`.
                onDone: [
                  { guard: { type: 'breaksRule', params: { actor: 'worker', rule: 'actorMayUseTool', reply: 'arrived' } }, target: 'checking', actions: { type: 'acceptAndRefuseFirstCall', params: { actor: 'worker', rule: 'actorMayUseTool' } } },
                  { guard: { type: 'breaksRule', params: { actor: 'worker', rule: 'argumentsMatchSchema', reply: 'arrived' } }, target: 'checking', actions: { type: 'acceptAndRefuseFirstCall', params: { actor: 'worker', rule: 'argumentsMatchSchema' } } },
                  { guard: { type: 'breaksRule', params: { actor: 'worker', rule: 'tagsWithinOutputTags', reply: 'arrived' } }, target: 'checking', actions: { type: 'acceptAndRefuseFirstCall', params: { actor: 'worker', rule: 'tagsWithinOutputTags' } } },
                  { guard: { type: 'moreCallsQueued', params: { reply: 'arrived' } }, target: 'checking', actions: { type: 'acceptAndSettleFirstCall', params: { actor: 'worker' } } },
                  { guard: { type: 'workerSubmitted', params: { reply: 'arrived' } }, target: '#session.waiting_user.review_artifact', actions: [{ type: 'acceptAndSettleFirstCall', params: { actor: 'worker' } }, 'publishArtifact'] },
                  { guard: { type: 'workerAsked', params: { reply: 'arrived' } }, target: '#session.waiting_user.worker_questions', actions: [{ type: 'acceptAndSettleFirstCall', params: { actor: 'worker' } }, 'askWorkerQuestions'] },
                  // Nothing usable in this reply: the worker tries again (the round counted).
                  { target: 'thinking', reenter: true, actions: 'acceptWorkerReply' },
                ],
                onError: { target: '#session.waiting_user.input', actions: 'noticeWorkerFailure' },
              },
            },
            checking: {
              always: [
                { guard: { type: 'breaksRule', params: { actor: 'worker', rule: 'actorMayUseTool' } }, actions: { type: 'refuseCall', params: { actor: 'worker', rule: 'actorMayUseTool' } } },
                { guard: { type: 'breaksRule', params: { actor: 'worker', rule: 'argumentsMatchSchema' } }, actions: { type: 'refuseCall', params: { actor: 'worker', rule: 'argumentsMatchSchema' } } },
                { guard: { type: 'breaksRule', params: { actor: 'worker', rule: 'tagsWithinOutputTags' } }, actions: { type: 'refuseCall', params: { actor: 'worker', rule: 'tagsWithinOutputTags' } } },
                { guard: { type: 'breaksRule', params: { actor: 'worker', rule: 'oneBoundaryPerReply' } }, actions: { type: 'refuseCall', params: { actor: 'worker', rule: 'oneBoundaryPerReply' } } },
                { guard: 'moreCallsQueued', actions: 'settleWorkerCall' },
                { guard: 'workerSubmitted', target: '#session.waiting_user.review_artifact', actions: ['settleWorkerCall', 'publishArtifact'] },
                { guard: 'workerAsked', target: '#session.waiting_user.worker_questions', actions: ['settleWorkerCall', 'askWorkerQuestions'] },
                // Nothing usable in this reply: the worker tries again (the round counted).
                { target: 'thinking' },
              ],
            },
          },
        },
      },
    },

    done: { type: 'final' },
  },
});

// The chart the wildcard reads (a provided copy has the same states and transitions).
chart = sessionMachine;

export type SessionMachine = typeof sessionMachine;
export type { SessionEvent };
