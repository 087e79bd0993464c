/**
 * The session statechart — the table of contents of Steward.
 *
 *   session
 *   ├── start                  (transient: a session without a package takes the legacy path, docs/design.md "Legacy paths")
 *   ├── waiting_user
 *   │   ├── skill_selection    legacy: choose a package
 *   │   ├── intake             the first request; the manager may clarify before it is confirmed
 *   │   ├── input              free input; may carry an assessment and a skippable question card
 *   │   ├── approve_step       a proposed run_worker waits for approve / reject
 *   │   ├── review_artifact    a worker's artifact waits for accept / reject (+ questions)
 *   │   ├── worker_questions   a worker asked before producing anything
 *   │   └── revision           after a reject: the user describes the changes wanted
 *   │   (any waiting state)    package_upgraded, sent by the runtime (`steward upgrade`): the pinned package version changes, the wait stays
 *   │   (any waiting state)    numbers its wait on entry (openWait) and keeps what closed it on exit (closeWait); a user
 *   │                          event naming another wait is refused first, by namesClosedWait (waits.ts: wait_closed)
 *   ├── running
 *   │   ├── manager            thinking (one LLM round) → checking (each call of the reply, by rule)
 *   │   └── worker             thinking → checking
 *   └── done
 *
 * Every guard, action and actor is named here (a guard's code is in session.guards.ts), so
 * the inspector shows the names and `sessionMachine.provide()` swaps them (the runtime
 * provides the real manager and worker turns). A turn's reply is accepted on its onDone edge; `checking` then checks each call by
 * the rule table (rules.ts): every refusal edge is the guard `breaksRule` with params
 * `{ actor, rule }`, rule 6 is `burstUsedUp`, the token budget `burstTokensWithinBudget`
 * (manager: the next round) / `burstTokensUsedUp` (worker: the next call). The guards on user
 * events (hasRequest, …) come with their refusal messages from the same file. No guard is
 * wrapped in `not(...)`, so the Stately tools show every one by name; every guard reads the
 * context as it is.
 *
 * The chart reports what happens as it happens, with XState's `emit` (session.reports.ts):
 * each state announces itself on entry (`announceState`, `announceWaiting`, `announceRound`,
 * `announceDone`), and each action that changes a fact listeners see reports the change it
 * made (a call checked, a reply or a failure, an artifact, a notice, a refused event). The
 * runtime's event hub subscribes with `actor.on('*')` and forwards.
 */
import { assertEvent, assign, emit, enqueueActions, fromPromise, setup, stateIn, type AnyStateMachine } from 'xstate';
import { UserError } from '../errors.js';
import type { ToolActor } from '../tools/schemas.js';
import { ancestry, leafNodes, readChart } from './refusals.js';
import { violationOf } from './rules.js';
import { DEFAULT_MAX_BURST, NO_LEDGER, NO_REPLY, type SessionContext, type SessionInput, type TurnOutput } from './session.context.js';
import { sessionGuards, type RuleParams, type SessionEvent } from './session.guards.js';
import * as report from './session.reports.js';
import * as update from './session.updates.js';
import { initialTranscripts } from './transcript.js';
import { closedWaitRejection, decisionDigest, namesClosedWait, NO_WAITS } from './waits.js';

type WaitingReason = report.WaitingReason;

/** A user event's time, when the runtime stamped one (a bare machine's events may carry none). */
const stampOf = (event: object) => ('at' in event && typeof event.at === 'string' ? { at: event.at } : {});

const turnNotProvided = (name: string) =>
  fromPromise<TurnOutput, SessionContext>(async () => {
    throw new UserError(
      `No ${name} actor: create sessions with createRuntime({ model }), or provide one with sessionMachine.provide({ actors: { ${name} } }).`,
    );
  });

/** The notice a notice action sets, as listeners get it. */
const noticed = (changes: Partial<SessionContext>): report.ChartEvent => ({ type: 'notice', text: changes.notice ?? '' });

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
    emitted: {} as report.ChartEvent,
  },
  actors: {
    managerTurn: turnNotProvided('managerTurn'),
    workerTurn: turnNotProvided('workerTurn'),
  },
  // Every guard's code, by name: session.guards.ts (the names are what the transitions below use).
  guards: sessionGuards,
  actions: {
    selectPackage: assign(({ context, event }) => {
      assertEvent(event, 'user_selected_package');
      return { package: context.catalog.find((p) => p.id === event.packageId) ?? null, catalog: [] };
    }),
    resetBurst: assign(({ context }) => update.resetBurst(context)),
    /** The session runs the new package version from now on (the runtime journals both hashes). */
    upgradePackage: assign(({ event }) => {
      assertEvent(event, 'package_upgraded');
      return { package: event.package };
    }),
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

    /** A turn's reply: into the transcript, the round and its tokens counted, its calls queued for `checking`. */
    acceptReply: enqueueActions(({ context, event, enqueue }, { actor }: { actor: ToolActor }) => {
      assertEvent(event, ['xstate.done.actor.managerTurn', 'xstate.done.actor.workerTurn']);
      enqueue.assign(update.acceptReply(context, actor, event.output));
      // Queued actions run in order: the report reads the context the assign above left.
      enqueue.emit(({ context: accepted }) => report.roundReplied(accepted, actor, event.output));
    }),
    /** The call at the head of the queue broke `rule`: its tool result is the rule's message. */
    refuseCall: enqueueActions(({ context, enqueue }, { actor, rule }: RuleParams) => {
      // A guard swapped with provide() may refuse a call the rule passes: it is refused in general words.
      const reason = violationOf(context, actor, rule)?.message ?? `This call was refused (${rule}).`;
      const result = update.refusalResult(context, reason);
      const checked = report.callChecked(context, actor, { rule, result });
      enqueue.assign(update.refuseCall(context, actor, result));
      if (checked) enqueue.emit(checked);
    }),
    /** Runs a loop tool, or takes a boundary tool as the reply's choice (no-op on an empty queue). */
    settleCall: enqueueActions(({ context, enqueue }) => {
      const checked = report.callChecked(context, 'manager');
      enqueue.assign(update.settleCall(context));
      if (checked) enqueue.emit(checked);
    }),
    /** Takes a submit or ask_user as the worker's choice (no-op on an empty queue). */
    settleWorkerCall: enqueueActions(({ context, enqueue }) => {
      const checked = report.callChecked(context, 'worker');
      enqueue.assign(update.settleWorkerCall(context));
      if (checked) enqueue.emit(checked);
    }),

    proposeStep: assign(({ context }, { waits }: { waits: boolean }) => update.takeStep(context, waits)),
    showManagerMessage: assign(({ context }) => update.showManagerMessage(context)),
    startWorkerRun: assign(({ context }) => ({ ...update.startWorkerConversation(context), intakeConfirmed: true })),
    publishArtifact: enqueueActions(({ context, enqueue }) => {
      const published = update.publishArtifact(context);
      enqueue.assign(published);
      const event = report.artifactPublished({ ...context, ...published });
      if (event) enqueue.emit(event);
    }),
    askWorkerQuestions: assign(({ context }) => update.askWorkerQuestions(context)),
    noticeBurstLimit: enqueueActions(({ context, enqueue }) => {
      const changes = update.noticeBurstLimit(context);
      enqueue.assign(changes);
      enqueue.emit(noticed(changes));
    }),
    noticeWorkerBurstLimit: enqueueActions(({ context, enqueue }) => {
      const changes = update.noticeWorkerBurstLimit(context);
      enqueue.assign(changes);
      enqueue.emit(noticed(changes));
    }),
    noticeTokenBudget: enqueueActions(({ context, enqueue }) => {
      const changes = update.noticeTokenBudget(context);
      enqueue.assign(changes);
      enqueue.emit(noticed(changes));
    }),
    noticeWorkerTokenBudget: enqueueActions(({ context, enqueue }) => {
      const changes = update.noticeWorkerTokenBudget(context);
      enqueue.assign(changes);
      enqueue.emit(noticed(changes));
    }),
    noticeManagerFailure: enqueueActions(({ context, event, enqueue }) => {
      assertEvent(event, 'xstate.error.actor.managerTurn');
      enqueue.emit(report.roundFailed(context, 'manager', event.error));
      const changes = update.noticeModelFailure('manager', event.error);
      enqueue.assign(changes);
      enqueue.emit(noticed(changes));
    }),
    noticeWorkerFailure: enqueueActions(({ context, event, enqueue }) => {
      assertEvent(event, 'xstate.error.actor.workerTurn');
      enqueue.emit(report.roundFailed(context, 'worker', event.error));
      const changes = update.noticeWorkerFailure(context, event.error);
      enqueue.assign(changes);
      enqueue.emit(noticed(changes));
    }),

    // Each state says it was entered; a waiting state, what it waits for; a thinking state,
    // the model round it starts.
    announceState: emit((_, { state }: { state: string }) => ({ type: 'state_entered' as const, state })),
    announceWaiting: emit(({ context }, { reason }: { reason: WaitingReason }) => ({
      type: 'waiting' as const,
      reason,
      state: `waiting_user.${reason}`,
      wait: context.waits.opened,
    })),
    announceRound: emit(({ context }) => ({ type: 'round_started' as const, ...report.roundOf(context, 'manager') })),
    // A worker round starts unless the burst or the token budget stops it (thinking's own eventless edges).
    announceWorkerRound: enqueueActions(({ context, check, enqueue }) => {
      // setup() types check() in its own actions without the guards it names beside them: the cast names one of those.
      const named = (guard: 'burstUsedUp' | 'burstTokensUsedUp') => check(guard as unknown as Parameters<typeof check>[0]);
      if (named('burstUsedUp') || named('burstTokensUsedUp')) return;
      enqueue.emit({ type: 'round_started', ...report.roundOf(context, 'worker') });
    }),
    // Each waiting state opens the next wait on its way in, and on its way out keeps what
    // closed it (so that a repeat of that decision is told apart from another one).
    openWait: assign(({ context }) => ({ waits: { ...context.waits, opened: context.waits.opened + 1 } })),
    closeWait: assign(({ context, event }) => ({ waits: { ...context.waits, answered: { wait: context.waits.opened, digest: decisionDigest(event) } } })),
    /** A decision for a wait that is not the open one: refused, recorded, and the session waits on as before. */
    refuseClosedWait: enqueueActions(({ context, event, enqueue }, { reason }: { reason: WaitingReason }) => {
      const state = `waiting_user.${reason}`;
      const rejection = closedWaitRejection(context, event, state);
      enqueue.assign(update.recordRejection(context, rejection));
      enqueue.emit({ type: 'user_event_refused', eventType: event.type, reason: rejection.reason, code: 'wait_closed' });
      enqueue.emit({ type: 'waiting', reason, state, wait: context.waits.opened });
    }),
    // Each waiting state, on its way out, reports the person's decision that ended the wait.
    announceDecision: enqueueActions(({ context, event, enqueue }, { reason }: { reason: WaitingReason }) => {
      const decision = report.decisionMade(context, reason, event);
      if (decision) enqueue.emit(decision);
    }),
    announceDone: emit(({ context }) => ({ type: 'done' as const, summary: context.message })),

    /**
     * Root wildcard: an event no active state takes is recorded with its reason, never
     * dropped. The active state is found with `stateIn` (actions see no snapshot), so this
     * works the same under a pure `transition()` as in a running actor.
     */
    recordRejection: enqueueActions(({ context, event, check, enqueue }) => {
      const leaf = leavesOf(chart).find((node) => check(stateIn(`#${node.id}`) as Parameters<typeof check>[0]));
      const { refusal } = readChart(leaf ? ancestry(leaf) : null, context, event);
      const state = refusal?.state ?? (leaf ? leaf.path.join('.') : 'done');
      // A decision for a closed wait that the state has no transition for (the session moved on
      // to a wait of another kind, or runs) is refused as such, like on the waiting states' own edges.
      if (namesClosedWait(context, event, leaf?.path[0] === 'waiting_user')) {
        const rejection = closedWaitRejection(context, event, state);
        enqueue.assign(update.recordRejection(context, rejection));
        enqueue.emit({ type: 'user_event_refused', eventType: event.type, reason: rejection.reason, code: 'wait_closed' });
      } else {
        // Reached only when no transition took the event: a reading that finds one that would
        // (a guard outside the table, via provide()) still records the refusal, in general words.
        const reason = refusal?.reason ?? `"${event.type}" was refused by a guard.`;
        enqueue.assign(update.recordRejection(context, { type: event.type, state, reason, ...stampOf(event) }));
        enqueue.emit({ type: 'user_event_refused', eventType: event.type, reason });
      }
      // The session still waits for the user, as it did before the event.
      if (leaf?.path[0] === 'waiting_user')
        enqueue.emit({ type: 'waiting', reason: leaf.path[1] as WaitingReason, state: leaf.path.join('.'), wait: context.waits.opened });
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
    waits: NO_WAITS,
  }),
  initial: 'start',
  on: {
    '*': { actions: 'recordRejection' },
  },
  states: {
    start: {
      always: [{ guard: 'hasPackage', target: 'waiting_user.intake' }, { target: 'waiting_user.skill_selection' }],
    },

    waiting_user: {
      initial: 'input',
      // Targetless: the session keeps waiting where it waited, on the new package version.
      on: { package_upgraded: { guard: 'upgradeKeepsWait', actions: 'upgradePackage' } },
      states: {
        skill_selection: {
          entry: [
            'openWait',
            { type: 'announceState', params: { state: 'waiting_user.skill_selection' } },
            { type: 'announceWaiting', params: { reason: 'skill_selection' } },
          ],
          exit: ['closeWait', { type: 'announceDecision', params: { reason: 'skill_selection' } }],
          on: {
            user_selected_package: [
              { guard: 'namesClosedWait', actions: { type: 'refuseClosedWait', params: { reason: 'skill_selection' } } },
              { guard: 'packageIsKnown', target: 'intake', actions: 'selectPackage' },
            ],
          },
        },
        intake: {
          entry: ['openWait', { type: 'announceState', params: { state: 'waiting_user.intake' } }, { type: 'announceWaiting', params: { reason: 'intake' } }],
          exit: ['closeWait', { type: 'announceDecision', params: { reason: 'intake' } }],
          on: {
            user_submitted_input: [
              { guard: 'namesClosedWait', actions: { type: 'refuseClosedWait', params: { reason: 'intake' } } },
              { target: '#session.running.manager', actions: ['resetBurst', 'recordRequest'] },
            ],
            user_confirmed_intake: [
              { guard: 'namesClosedWait', actions: { type: 'refuseClosedWait', params: { reason: 'intake' } } },
              { guard: 'hasRequest', target: '#session.running.manager', actions: ['resetBurst', 'confirmIntake'] },
            ],
            // A clarification card: its answers become part of the request.
            user_answered_questions: [
              { guard: 'namesClosedWait', actions: { type: 'refuseClosedWait', params: { reason: 'intake' } } },
              { guard: 'hasQuestionCard', target: '#session.running.manager', actions: ['resetBurst', 'recordRequestAnswers'] },
            ],
            user_skipped_questions: [
              { guard: 'namesClosedWait', actions: { type: 'refuseClosedWait', params: { reason: 'intake' } } },
              { guard: 'hasQuestionCard', target: '#session.running.manager', actions: ['resetBurst', 'giveManagerAnswers'] },
            ],
          },
        },
        input: {
          entry: ['openWait', { type: 'announceState', params: { state: 'waiting_user.input' } }, { type: 'announceWaiting', params: { reason: 'input' } }],
          exit: ['closeWait', { type: 'announceDecision', params: { reason: 'input' } }],
          on: {
            user_submitted_input: [
              { guard: 'namesClosedWait', actions: { type: 'refuseClosedWait', params: { reason: 'input' } } },
              { target: '#session.running.manager', actions: ['resetBurst', 'recordUserInput'] },
            ],
            user_answered_questions: [
              { guard: 'namesClosedWait', actions: { type: 'refuseClosedWait', params: { reason: 'input' } } },
              { guard: 'hasQuestionCard', target: '#session.running.manager', actions: ['resetBurst', 'giveManagerAnswers'] },
            ],
            user_skipped_questions: [
              { guard: 'namesClosedWait', actions: { type: 'refuseClosedWait', params: { reason: 'input' } } },
              { guard: 'hasQuestionCard', target: '#session.running.manager', actions: ['resetBurst', 'giveManagerAnswers'] },
            ],
          },
        },
        approve_step: {
          entry: [
            'openWait',
            { type: 'announceState', params: { state: 'waiting_user.approve_step' } },
            { type: 'announceWaiting', params: { reason: 'approve_step' } },
          ],
          exit: ['closeWait', { type: 'announceDecision', params: { reason: 'approve_step' } }],
          on: {
            user_approved_next_step: [
              { guard: 'namesClosedWait', actions: { type: 'refuseClosedWait', params: { reason: 'approve_step' } } },
              {
                guard: 'editedRoleIsWorkers',
                target: '#session.running.worker',
                actions: ['resetBurst', 'approveStep', 'startWorkerRun'],
              },
            ],
            user_rejected_next_step: [
              { guard: 'namesClosedWait', actions: { type: 'refuseClosedWait', params: { reason: 'approve_step' } } },
              { target: '#session.running.manager', actions: ['resetBurst', 'tellManagerStepRejected'] },
            ],
          },
        },
        review_artifact: {
          entry: [
            'openWait',
            { type: 'announceState', params: { state: 'waiting_user.review_artifact' } },
            { type: 'announceWaiting', params: { reason: 'review_artifact' } },
          ],
          exit: ['closeWait', { type: 'announceDecision', params: { reason: 'review_artifact' } }],
          on: {
            user_accepted_artifact: [
              { guard: 'namesClosedWait', actions: { type: 'refuseClosedWait', params: { reason: 'review_artifact' } } },
              { guard: 'editsWithinArtifactTags', target: '#session.running.manager', actions: ['resetBurst', 'acceptArtifact'] },
            ],
            user_rejected_artifact: [
              { guard: 'namesClosedWait', actions: { type: 'refuseClosedWait', params: { reason: 'review_artifact' } } },
              { guard: 'isArtifactUnderReview', target: 'revision', actions: ['resetBurst', 'rejectArtifact'] },
            ],
          },
        },
        worker_questions: {
          entry: [
            'openWait',
            { type: 'announceState', params: { state: 'waiting_user.worker_questions' } },
            { type: 'announceWaiting', params: { reason: 'worker_questions' } },
          ],
          exit: ['closeWait', { type: 'announceDecision', params: { reason: 'worker_questions' } }],
          on: {
            user_answered_questions: [
              { guard: 'namesClosedWait', actions: { type: 'refuseClosedWait', params: { reason: 'worker_questions' } } },
              { target: '#session.running.worker', actions: ['resetBurst', 'giveWorkerAnswers'] },
            ],
            user_skipped_questions: [
              { guard: 'namesClosedWait', actions: { type: 'refuseClosedWait', params: { reason: 'worker_questions' } } },
              { target: '#session.running.worker', actions: ['resetBurst', 'giveWorkerAnswers'] },
            ],
          },
        },
        revision: {
          entry: [
            'openWait',
            { type: 'announceState', params: { state: 'waiting_user.revision' } },
            { type: 'announceWaiting', params: { reason: 'revision' } },
          ],
          exit: ['closeWait', { type: 'announceDecision', params: { reason: 'revision' } }],
          on: {
            user_submitted_input: [
              { guard: 'namesClosedWait', actions: { type: 'refuseClosedWait', params: { reason: 'revision' } } },
              { target: '#session.running.worker', actions: ['resetBurst', 'startRevision'] },
            ],
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
              entry: [{ type: 'announceState', params: { state: 'running.manager.thinking' } }, 'announceRound'],
              invoke: {
                id: 'managerTurn',
                src: 'managerTurn',
                input: ({ context }) => context,
                onDone: { target: 'checking', actions: { type: 'acceptReply', params: { actor: 'manager' } } },
                onError: { target: '#session.waiting_user.input', actions: 'noticeManagerFailure' },
              },
            },
            // Each pass checks the head of the queue against the rules in CALL_RULE_ORDER (rules.ts:
            // the tool contract's order, rule 5 before 2 so that a passed inputTags gets its own message) and
            // refuses it, or settles it; the last call is settled on the transition that leaves.
            checking: {
              entry: { type: 'announceState', params: { state: 'running.manager.checking' } },
              always: [
                {
                  guard: { type: 'breaksRule', params: { actor: 'manager', rule: 'actorMayUseTool' } },
                  actions: { type: 'refuseCall', params: { actor: 'manager', rule: 'actorMayUseTool' } },
                },
                {
                  guard: { type: 'breaksRule', params: { actor: 'manager', rule: 'managerOmitsTagLists' } },
                  actions: { type: 'refuseCall', params: { actor: 'manager', rule: 'managerOmitsTagLists' } },
                },
                {
                  guard: { type: 'breaksRule', params: { actor: 'manager', rule: 'argumentsMatchSchema' } },
                  actions: { type: 'refuseCall', params: { actor: 'manager', rule: 'argumentsMatchSchema' } },
                },
                {
                  guard: { type: 'breaksRule', params: { actor: 'manager', rule: 'workerIsRegistered' } },
                  actions: { type: 'refuseCall', params: { actor: 'manager', rule: 'workerIsRegistered' } },
                },
                {
                  guard: { type: 'breaksRule', params: { actor: 'manager', rule: 'oneBoundaryPerReply' } },
                  actions: { type: 'refuseCall', params: { actor: 'manager', rule: 'oneBoundaryPerReply' } },
                },
                { guard: 'moreCallsQueued', actions: 'settleCall' },
                {
                  guard: 'stepNeedsApproval',
                  target: '#session.waiting_user.approve_step',
                  actions: ['settleCall', { type: 'proposeStep', params: { waits: true } }],
                },
                {
                  guard: 'choseWorkerRun',
                  target: '#session.running.worker',
                  actions: ['settleCall', { type: 'proposeStep', params: { waits: false } }, 'startWorkerRun'],
                },
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
              entry: [{ type: 'announceState', params: { state: 'running.worker.thinking' } }, 'announceWorkerRound'],
              always: [
                { guard: 'burstUsedUp', target: '#session.waiting_user.input', actions: 'noticeWorkerBurstLimit' },
                { guard: 'burstTokensUsedUp', target: '#session.waiting_user.input', actions: 'noticeWorkerTokenBudget' },
              ],
              invoke: {
                id: 'workerTurn',
                src: 'workerTurn',
                input: ({ context }) => context,
                onDone: { target: 'checking', actions: { type: 'acceptReply', params: { actor: 'worker' } } },
                onError: { target: '#session.waiting_user.input', actions: 'noticeWorkerFailure' },
              },
            },
            checking: {
              entry: { type: 'announceState', params: { state: 'running.worker.checking' } },
              always: [
                {
                  guard: { type: 'breaksRule', params: { actor: 'worker', rule: 'actorMayUseTool' } },
                  actions: { type: 'refuseCall', params: { actor: 'worker', rule: 'actorMayUseTool' } },
                },
                {
                  guard: { type: 'breaksRule', params: { actor: 'worker', rule: 'argumentsMatchSchema' } },
                  actions: { type: 'refuseCall', params: { actor: 'worker', rule: 'argumentsMatchSchema' } },
                },
                {
                  guard: { type: 'breaksRule', params: { actor: 'worker', rule: 'tagsWithinOutputTags' } },
                  actions: { type: 'refuseCall', params: { actor: 'worker', rule: 'tagsWithinOutputTags' } },
                },
                {
                  guard: { type: 'breaksRule', params: { actor: 'worker', rule: 'oneBoundaryPerReply' } },
                  actions: { type: 'refuseCall', params: { actor: 'worker', rule: 'oneBoundaryPerReply' } },
                },
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

    done: { type: 'final', entry: [{ type: 'announceState', params: { state: 'done' } }, 'announceDone'] },
  },
});

// The chart the wildcard reads (a provided copy has the same states and transitions).
chart = sessionMachine;

export type SessionMachine = typeof sessionMachine;
export type { SessionEvent };
