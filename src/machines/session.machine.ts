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
 *   │   ├── manager            thinking (one LLM round) → checking (each tool call, by rule) → where the reply leads
 *   │   └── worker             thinking → checking
 *   └── done
 *
 * Every guard, action and actor is named here, so the inspector shows the names and
 * `sessionMachine.provide()` swaps them (the runtime provides the real manager and worker
 * turns). Guards named after the seed's validation rules: actorMayUseTool (1),
 * argumentsMatchSchema (2), workerIsRegistered (3), tagsWithinOutputTags (4),
 * managerOmitsTagLists (5), burstWithinLimit (6).
 */
import { assign, fromPromise, not, setup, type AnyMachineSnapshot } from 'xstate';
import { REQUEST_TAG } from '../blackboard/blackboard.js';
import { UserError } from '../errors.js';
import { findTool, type ToolActor } from '../tools/schemas.js';
import {
  burstWithinLimit,
  checkActorMayUseTool,
  checkArgumentsMatchSchema,
  checkManagerOmitsTagLists,
  checkTagsWithinOutputTags,
  checkWorkerIsRegistered,
} from '../tools/validation.js';
import { acceptedUserEvents, explainRefusal, stateString } from './refusals.js';
import { DEFAULT_MAX_BURST, NO_REPLY, type Boundary, type SessionContext, type SessionInput, type TurnOutput } from './session.context.js';
import type { UserEvent } from './session.events.js';
import type { QueuedCall } from '../tools/reply.js';
import * as update from './session.updates.js';
import { initialTranscripts } from './transcript.js';

type DoneTurn = { type: `xstate.done.actor.${'managerTurn' | 'workerTurn'}`; output: TurnOutput };
type ErrorTurn = { type: `xstate.error.actor.${'managerTurn' | 'workerTurn'}`; error: unknown };
type SessionEvent = UserEvent | DoneTurn | ErrorTurn;

type ActorParam = { actor: ToolActor };
type Rule = 'actorMayUseTool' | 'argumentsMatchSchema' | 'workerIsRegistered' | 'tagsWithinOutputTags' | 'managerOmitsTagLists' | 'oneBoundaryPerReply';

function outputTagsOfStep(context: SessionContext): string[] {
  const workerId = context.step?.workerId;
  return context.package?.workers.find((w) => w.id === workerId)?.outputTags ?? [];
}

/** The message a refused tool call gets, by the rule it broke. */
function violation(context: SessionContext, actor: ToolActor, rule: Rule): string {
  const call = context.reply.queue[0]!;
  switch (rule) {
    case 'actorMayUseTool': return checkActorMayUseTool(actor, call)!;
    case 'argumentsMatchSchema': return checkArgumentsMatchSchema(actor, call)!;
    case 'workerIsRegistered': return checkWorkerIsRegistered(call, context.package?.workers ?? [])!;
    case 'tagsWithinOutputTags': return checkTagsWithinOutputTags(call, outputTagsOfStep(context))!;
    case 'managerOmitsTagLists': return checkManagerOmitsTagLists(actor, call)!;
    case 'oneBoundaryPerReply':
      return `Only one ${actor === 'manager' ? 'boundary tool' : `${call.call.function.name} call`} runs per reply, and this reply already chose one. Call ${call.call.function.name} again in a later turn if it is still needed.`;
  }
}

/** A rule guard: the head of the queue passes `check` (an empty queue has nothing to refuse). */
function passes(context: SessionContext, check: (call: QueuedCall) => string | null): boolean {
  const head = context.reply.queue[0];
  return head === undefined || check(head) === null;
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

const turnNotProvided = (name: string) =>
  fromPromise<TurnOutput, SessionContext>(async () => {
    throw new UserError(`No ${name} actor: create sessions with createRuntime({ model }), or provide one with sessionMachine.provide({ actors: { ${name} } }).`);
  });

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
    packageIsKnown: ({ context, event }) =>
      event.type === 'user_selected_package' && context.catalog.some((p) => p.id === event.packageId),
    hasRequest: ({ context }) => REQUEST_TAG in context.blackboard,
    hasQuestionCard: ({ context }) => context.questions !== null,
    isArtifactUnderReview: ({ context, event }) =>
      'artifactId' in event && context.artifacts.some((a) => a.id === event.artifactId && a.status === 'pending_review'),

    // The seed's validation rules, checked on the head of the tool-call queue.
    actorMayUseTool: ({ context }, { actor }: ActorParam) => passes(context, (call) => checkActorMayUseTool(actor, call)),
    argumentsMatchSchema: ({ context }, { actor }: ActorParam) => passes(context, (call) => checkArgumentsMatchSchema(actor, call)),
    workerIsRegistered: ({ context }) => passes(context, (call) => checkWorkerIsRegistered(call, context.package?.workers ?? [])),
    tagsWithinOutputTags: ({ context }) => passes(context, (call) => checkTagsWithinOutputTags(call, outputTagsOfStep(context))),
    managerOmitsTagLists: ({ context }) => passes(context, (call) => checkManagerOmitsTagLists('manager', call)),
    burstWithinLimit: ({ context }) => burstWithinLimit(context.burst, context.maxBurst),

    moreCallsQueued: ({ context }) => context.reply.queue.length > 1,
    boundaryAlreadyChosen: ({ context }) => context.reply.boundary !== null && headKind(context) === 'boundary',
    workerAlreadyChoseThis: ({ context }) => {
      const name = context.reply.queue[0]?.call.function.name;
      return name === 'submit' ? context.reply.workerChoice.outputs !== undefined : name !== undefined && context.reply.workerChoice.questions !== undefined;
    },

    // Where a reply leads, once its last call is settled.
    choseApprovalStep: ({ context }) => {
      const boundary = settledBoundary(context);
      return boundary?.tool === 'run_worker' && boundary.step.requiresApproval;
    },
    choseWorkerRun: ({ context }) => settledBoundary(context)?.tool === 'run_worker',
    choseClarification: ({ context }) => !context.intakeConfirmed && isUserTurn(settledBoundary(context)),
    choseUserTurn: ({ context }) => isUserTurn(settledBoundary(context)),
    choseFinish: ({ context }) => settledBoundary(context)?.tool === 'finish',
    workerSubmitted: ({ context }) =>
      context.reply.queue.length <= 1 && (context.reply.workerChoice.outputs !== undefined || context.reply.queue[0]?.call.function.name === 'submit'),
    workerAsked: ({ context }) =>
      context.reply.queue.length <= 1 && (context.reply.workerChoice.questions !== undefined || context.reply.queue[0]?.call.function.name === 'ask_user'),
  },
  actions: {
    selectPackage: assign(({ context, event }) => ({
      package: context.catalog.find((p) => p.id === (event as { packageId: string }).packageId) ?? null,
      catalog: [],
    })),
    resetBurst: assign(update.resetBurst),
    recordRequest: assign(({ context, event }) => update.recordRequest(context, (event as { text: string }).text)),
    confirmIntake: assign(({ context }) => update.confirmIntake(context)),
    recordUserInput: assign(({ context, event }) => update.recordUserInput(context, (event as { text: string }).text)),
    recordRequestAnswers: assign(({ context, event }) =>
      update.recordRequestAnswers(context, (event as { answers: Record<string, string> }).answers)),
    giveManagerAnswers: assign(({ context, event }) =>
      update.recordAnswers(context, 'manager', event.type === 'user_answered_questions' ? event.answers : null)),
    giveWorkerAnswers: assign(({ context, event }) =>
      update.recordAnswers(context, 'worker', event.type === 'user_answered_questions' ? event.answers : null)),
    tellManagerStepRejected: assign(({ context, event }) => update.tellManagerStepRejected(context, (event as { reason?: string }).reason)),
    acceptArtifact: assign(({ context, event }) => update.acceptArtifact(context, (event as { artifactId: string }).artifactId)),
    rejectArtifact: assign(({ context, event }) => {
      const { artifactId, reason } = event as { artifactId: string; reason?: string };
      return update.rejectArtifact(context, artifactId, reason);
    }),
    startRevision: assign(({ context, event }) => update.startRevision(context, (event as { text: string }).text)),

    acceptManagerReply: assign(({ context, event }) => update.acceptReply(context, 'manager', (event as DoneTurn).output)),
    acceptWorkerReply: assign(({ context, event }) => update.acceptReply(context, 'worker', (event as DoneTurn).output)),
    refuseCall: assign(({ context }, { actor, rule }: ActorParam & { rule: Rule }) =>
      update.refuseCall(context, actor, violation(context, actor, rule))),
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
    noticeManagerFailure: assign(({ event }) => update.noticeModelFailure('manager', (event as ErrorTurn).error)),
    noticeWorkerFailure: assign(({ context, event }) => update.noticeWorkerFailure(context, (event as ErrorTurn).error)),

    /** Root wildcard: an event no active state accepts is recorded with its reason, never dropped. */
    recordRejection: assign(({ context, event, self }) => {
      const current = self.getSnapshot() as AnyMachineSnapshot | undefined;
      // Under a pure transition (xstate/graph, `transition()`), `self` is a stand-in actor
      // whose snapshot is not this machine's: record the refusal without the state then.
      const snapshot = current && Array.isArray(current._nodes) ? current : undefined;
      const state = snapshot ? stateString(snapshot.value) : '';
      const accepted = snapshot ? acceptedUserEvents(snapshot) : [];
      const reason = explainRefusal(state, accepted, event as { type: string }, context);
      return update.recordRejection(context, { type: event.type, state, reason });
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
    usage: { promptTokens: 0, completionTokens: 0 },
    rounds: 0,
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
            user_approved_next_step: { target: '#session.running.worker', actions: ['resetBurst', 'startWorkerRun'] },
            user_rejected_next_step: { target: '#session.running.manager', actions: ['resetBurst', 'tellManagerStepRejected'] },
          },
        },
        review_artifact: {
          on: {
            user_accepted_artifact: { guard: 'isArtifactUnderReview', target: '#session.running.manager', actions: ['resetBurst', 'acceptArtifact'] },
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
                onDone: { target: 'checking', actions: 'acceptManagerReply' },
                onError: { target: '#session.waiting_user.input', actions: 'noticeManagerFailure' },
              },
            },
            // Each pass checks the head of the queue against the rules in the seed's order
            // (rule 5 before 2, so that a passed inputTags gets its own message) and refuses it,
            // or settles it; the last call is settled on the transition that leaves, so that a
            // one-call reply (the common case) takes a single step from here.
            checking: {
              always: [
                { guard: not({ type: 'actorMayUseTool', params: { actor: 'manager' as const } }), actions: { type: 'refuseCall', params: { actor: 'manager', rule: 'actorMayUseTool' } } },
                { guard: not('managerOmitsTagLists'), actions: { type: 'refuseCall', params: { actor: 'manager', rule: 'managerOmitsTagLists' } } },
                { guard: not({ type: 'argumentsMatchSchema', params: { actor: 'manager' as const } }), actions: { type: 'refuseCall', params: { actor: 'manager', rule: 'argumentsMatchSchema' } } },
                { guard: not('workerIsRegistered'), actions: { type: 'refuseCall', params: { actor: 'manager', rule: 'workerIsRegistered' } } },
                { guard: 'boundaryAlreadyChosen', actions: { type: 'refuseCall', params: { actor: 'manager', rule: 'oneBoundaryPerReply' } } },
                { guard: 'moreCallsQueued', actions: 'settleCall' },
                { guard: 'choseApprovalStep', target: '#session.waiting_user.approve_step', actions: ['settleCall', 'proposeStep'] },
                { guard: 'choseWorkerRun', target: '#session.running.worker', actions: ['settleCall', 'proposeStep', 'startWorkerRun'] },
                { guard: 'choseClarification', target: '#session.waiting_user.intake', actions: ['settleCall', 'showManagerMessage'] },
                { guard: 'choseUserTurn', target: '#session.waiting_user.input', actions: ['settleCall', 'showManagerMessage'] },
                { guard: 'choseFinish', target: '#session.done', actions: ['settleCall', 'showManagerMessage'] },
                // Only loop tools (or refused calls) in this reply: the burst goes on — unless it
                // is used up (rule 6), checked here because only this edge starts another round.
                { guard: not('burstWithinLimit'), target: '#session.waiting_user.input', actions: ['settleCall', 'noticeBurstLimit'] },
                { target: 'thinking', actions: 'settleCall' },
              ],
            },
          },
        },

        worker: {
          initial: 'thinking',
          states: {
            thinking: {
              always: { guard: not('burstWithinLimit'), target: '#session.waiting_user.input', actions: 'noticeWorkerBurstLimit' },
              invoke: {
                id: 'workerTurn',
                src: 'workerTurn',
                input: ({ context }) => context,
                onDone: { target: 'checking', actions: 'acceptWorkerReply' },
                onError: { target: '#session.waiting_user.input', actions: 'noticeWorkerFailure' },
              },
            },
            checking: {
              always: [
                { guard: not({ type: 'actorMayUseTool', params: { actor: 'worker' as const } }), actions: { type: 'refuseCall', params: { actor: 'worker', rule: 'actorMayUseTool' } } },
                { guard: not({ type: 'argumentsMatchSchema', params: { actor: 'worker' as const } }), actions: { type: 'refuseCall', params: { actor: 'worker', rule: 'argumentsMatchSchema' } } },
                { guard: not('tagsWithinOutputTags'), actions: { type: 'refuseCall', params: { actor: 'worker', rule: 'tagsWithinOutputTags' } } },
                { guard: 'workerAlreadyChoseThis', actions: { type: 'refuseCall', params: { actor: 'worker', rule: 'oneBoundaryPerReply' } } },
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

export type SessionMachine = typeof sessionMachine;
export type { SessionEvent };
