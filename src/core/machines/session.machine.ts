/**
 * The session statechart — the table of contents of Steward.
 *
 *   session
 *   ├── start                  (transient: a session without a package takes the legacy path, docs/design.md "Legacy paths")
 *   ├── waiting_user
 *   │   ├── skill_selection    legacy: choose a package
 *   │   ├── intake             the first request; the manager may clarify before it is confirmed
 *   │   ├── input              free input; may carry an assessment and a skippable question card
 *   │   ├── approve_step       a proposed run_worker waits for approve / reject (a fan-out: each of its steps, by `item`)
 *   │   ├── review_artifact    a worker's artifact waits for accept / reject (+ questions); a fan-in: each of its artifacts
 *   │   ├── worker_questions   a worker asked before producing anything
 *   │   ├── revision           after a reject: the user describes the changes wanted
 *   │   ├── approve_tool       a worker's MCP tool calls that need a person: each approved (maybe edited) or rejected
 *   │   ├── tool_input         the server of the call under way asks a person for input (a form, or a page to visit)
 *   │   └── tool_interrupted   a call cut off by a stopped process: run it again, skip it, or give its result
 *   │   (any waiting state)    package_upgraded, sent by the runtime (`steward upgrade`): the pinned package version changes, the wait stays
 *   │   (any waiting state)    numbers its wait on entry (openWait, which announces it) and keeps what closed it on exit
 *   │                          (closeWait, which reports the decision); a user event naming another wait is refused
 *   │                          first, by namesClosedWait (waits.ts: wait_closed); in a wait about a worker that names
 *   │                          who decides (approvers: its step and tool waits; reviewers: its artifacts) or that was
 *   │                          escalated, a decision by anyone else next, by notADecider (deadlines.ts: not_a_decider)
 *   │   (any waiting state)    deadline_passed, sent by the runtime's timer for the open wait's current rule
 *   │                          (deadlines.ts): a decision wait rejects (deadlineRejects, its own edge), any wait may
 *   │                          re-open for another group (deadlineEscalates) or remind (deadlineReminds); one for a
 *   │                          wait or rule no longer current is refused (deadline_stale) and changes nothing
 *   ├── running
 *   │   ├── manager            starting (transient: a held worker of a fan-out goes first) → thinking (one LLM
 *   │   │                      round) → checking (each call of the reply, by rule) → routing (transient: where
 *   │   │                      the settled reply leads)
 *   │   ├── worker             starting (transient: a round starts unless the burst or token budget is used up)
 *   │   │                      → thinking → checking → routing; calling runs the reply's approved MCP tool calls,
 *   │   │                      one at a time in the model's order (tool-calls.ts), and only those
 *   │   └── team               a fan-out (team.ts): independent workers proposed in one reply run at once, each
 *   │                          branch's round an actor of its own (`branch:<item>`). starting (transient) →
 *   │                          working; a branch's reply goes through worker.checking (the branch focused) →
 *   │                          routing (transient: its next round, or it finished) → joining (transient: the
 *   │                          fan-in once none runs: the artifacts' review, then each held branch, resuming,
 *   │                          alone as the session's worker, then the manager)
 *   └── done
 *
 * Every guard, action and actor is named here (a guard's code is in session.guards.ts), so
 * the inspector shows the names and `sessionMachine.provide()` swaps them (the runtime
 * provides the real manager and worker turns). A turn's reply is accepted on its onDone edge; `checking` then checks each call by
 * the rule table (rules.ts): every refusal edge is the guard `breaksRule` with params
 * `{ actor, rule }`, in the order the calls are checked (this chart is the one place of that
 * order); a call that passes is settled. `routing` then reads where the settled reply leads
 * (`reply.boundary`, the worker's choice); rule 6 is `burstUsedUp`, the token budget
 * `burstTokensWithinBudget` (manager: the next round) / `burstTokensUsedUp` (worker: the next
 * call, in `starting`). The guards on user events (hasRequest, …) come with their refusal
 * messages from the same file. No guard is wrapped in `not(...)`, so the Stately tools show
 * every one by name; every guard reads the context as it is.
 *
 * The chart reports what happens as it happens, with XState's `emit` (session.reports.ts):
 * each state announces itself on entry (`announceState`, `openWait`, `announceRound`,
 * `announceDone`; a transient state is never stayed in and says nothing), and each action that changes a fact listeners see reports the change it
 * made (a call checked, a reply or a failure, an artifact, a notice, a refused event). The
 * runtime's event hub subscribes with `actor.on('*')` and forwards.
 */
import { assertEvent, assign, emit, enqueueActions, fromPromise, setup, stateIn, type AnyStateMachine } from 'xstate';
import { UserError } from '../errors.js';
import type { ToolActor } from '../tools/schemas.js';
import { activeNodesAsked, readChart } from './refusals.js';
import { violationOf } from './rules.js';
import { DEFAULT_MAX_BURST, NO_LEDGER, NO_REPLY, type SessionContext, type SessionInput, type TurnOutput } from './session.context.js';
import { sessionGuards, type RuleParams, type SessionEvent } from './session.guards.js';
import * as report from './session.reports.js';
import * as update from './session.updates.js';
import { initialTranscripts } from './transcript.js';
import * as tools from './tool-calls.js';
import type { ToolCallInput, ToolCallOutput } from '../tools/server-tools.js';
import { closedWaitRejection, decisionDigest, namesClosedWait, NO_WAITS } from './waits.js';
import { notADeciderMessage, staleDeadlineMessage, waitTerms, type DeadlinePassedEvent } from './deadlines.js';
import * as deadline from './deadline-outcomes.js';
import { expiryReason } from './deadline-outcomes.js';
import * as team from './team.js';

type WaitingReason = report.WaitingReason;

/** A user event's time, when the runtime stamped one (a bare machine's events may carry none). */
const stampOf = (event: object) => ('at' in event && typeof event.at === 'string' ? { at: event.at } : {});

const toolCallNotProvided = fromPromise<ToolCallOutput, ToolCallInput>(async () => {
  throw new UserError(
    'No toolCall actor: create sessions with createRuntime({ model }) (it runs MCP tools), or provide one with sessionMachine.provide({ actors: { toolCall } }).',
  );
});

const turnNotProvided = (name: string) =>
  fromPromise<TurnOutput, SessionContext>(async () => {
    throw new UserError(
      `No ${name} actor: create sessions with createRuntime({ model }), or provide one with sessionMachine.provide({ actors: { ${name} } }).`,
    );
  });

/** The notice a notice action sets, as listeners get it. */
const noticed = (changes: Partial<SessionContext>): report.ChartEvent => ({ type: 'notice', text: changes.notice ?? '' });

/**
 * The chart, as the wildcard's refusal reads it once the module has run (a provided copy has
 * the same states and transitions). A function, not a variable assigned after the machine is
 * built: nothing here changes after import.
 */
function chart(): AnyStateMachine {
  return sessionMachine;
}

type StateCheck = (guard: ReturnType<typeof stateIn>) => boolean;

/** The waiting reason of the open wait, as an action of `waiting_user` finds it (an action sees no snapshot: stateIn asks). */
function openReason(check: unknown): WaitingReason {
  const nodes = activeNodesAsked(chart(), (id) => (check as StateCheck)(stateIn(`#${id}`)));
  return nodes[2]?.key as WaitingReason;
}

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
    toolCall: toolCallNotProvided,
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
    upgradePackage: assign(({ context, event }) => {
      assertEvent(event, 'package_upgraded');
      return { package: tools.repinnedPackage(context, event.package) };
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

    /** A person's decision on one MCP tool call of the wait (approved, maybe with edited arguments, or rejected). */
    decideToolCall: enqueueActions(({ context, event, enqueue }) => {
      assertEvent(event, ['user_approved_tool_call', 'user_rejected_tool_call']);
      const decided =
        event.type === 'user_approved_tool_call'
          ? tools.approveToolCall(context, event.callId, event.arguments, event.by)
          : tools.rejectToolCall(context, event.callId, event.reason, event.by);
      enqueue.assign(decided);
      const reported = report.toolCallDecided({ ...context, ...decided }, event.callId, tools.waitOfCall(context, event.callId));
      if (reported) enqueue.emit(reported);
    }),
    /** A person answered what the call's server asked: the call goes on with the answers. */
    answerToolInput: enqueueActions(({ context, event, enqueue }) => {
      assertEvent(event, 'user_answered_tool_input');
      const answered = tools.answerToolInput(context, event.callId, event.responses, event.by);
      enqueue.assign(answered);
      const reported = report.toolCallDecided({ ...context, ...answered }, event.callId, 'tool_input', 'answered');
      if (reported) enqueue.emit(reported);
    }),
    /** A person gave an interrupted call's result by hand: the model reads it as the call's result. */
    giveToolResult: enqueueActions(({ context, event, enqueue }) => {
      assertEvent(event, 'user_gave_tool_result');
      const given = tools.giveToolResult(context, event.callId, event.result, event.by);
      enqueue.assign(given);
      const reported = report.toolCallDecided({ ...context, ...given }, event.callId, 'tool_interrupted', 'result_given');
      if (reported) enqueue.emit(reported);
    }),
    announceToolCall: emit(({ context }) => report.toolCallStarted(tools.nextToolCall(context))),
    askForToolInput: enqueueActions(({ context, event, enqueue }) => {
      assertEvent(event, 'xstate.done.actor.toolCall');
      if (event.output.outcome !== 'input_required') return;
      enqueue.emit(report.toolCallFinished(tools.nextToolCall(context), event.output));
      enqueue.assign(tools.askForToolInput(context, event.output));
    }),
    holdInterruptedCall: enqueueActions(({ context, event, enqueue }) => {
      assertEvent(event, 'xstate.done.actor.toolCall');
      enqueue.emit(report.toolCallFinished(tools.nextToolCall(context), event.output));
      enqueue.assign(tools.holdInterruptedCall(context));
    }),
    recordToolResult: enqueueActions(({ context, event, enqueue }) => {
      assertEvent(event, 'xstate.done.actor.toolCall');
      // The other outcomes have edges of their own (toolDefinitionChanged, toolAskedForInput, toolCallInterrupted).
      if (event.output.outcome !== 'result' && event.output.outcome !== 'failed') return;
      enqueue.emit(report.toolCallFinished(tools.nextToolCall(context), event.output));
      enqueue.assign(tools.recordToolResult(context, event.output));
    }),
    recordToolFailure: enqueueActions(({ context, event, enqueue }) => {
      assertEvent(event, 'xstate.error.actor.toolCall');
      enqueue.emit(report.toolCallFinished(tools.nextToolCall(context), undefined));
      enqueue.assign(tools.recordToolFailure(context, event.error));
    }),
    reopenChangedTool: enqueueActions(({ context, event, enqueue }) => {
      assertEvent(event, 'xstate.done.actor.toolCall');
      if (event.output.outcome !== 'definition_changed') return;
      enqueue.emit(report.toolCallFinished(tools.nextToolCall(context), event.output));
      enqueue.assign(tools.reopenChangedTool(context, event.output));
    }),
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

    // A running state and the final one say they were entered (a waiting state says so in
    // openWait); a thinking state, the model round it starts.
    announceState: emit((_, { state }: { state: string }) => ({ type: 'state_entered' as const, state })),
    announceRound: emit(({ context }, { actor }: { actor: ToolActor }) => ({ type: 'round_started' as const, ...report.roundOf(context, actor) })),
    // Each waiting state opens the next wait on its way in and says what it waits for; on its
    // way out it keeps what closed the wait (so that a repeat of that decision is told apart
    // from another one) and reports the person's decision. The state's path is its reason's.
    openWait: enqueueActions(({ context, enqueue }, { reason }: { reason: WaitingReason }) => {
      const opened = context.waits.opened + 1;
      const state = `waiting_user.${reason}`;
      enqueue.assign({ waits: { ...context.waits, opened, ...waitTerms(context, reason) } });
      enqueue.emit({ type: 'state_entered', state });
      enqueue.emit({ type: 'waiting', reason, state, wait: opened });
    }),
    closeWait: enqueueActions(({ context, event, enqueue }, { reason }: { reason: WaitingReason }) => {
      // The wait's deadline and deciders stay until the next wait opens: the edge that leaves it (an expiry) reads them.
      enqueue.assign({ waits: { ...context.waits, answered: { wait: context.waits.opened, digest: decisionDigest(event) } } });
      const decision = report.decisionMade(context, reason, event);
      if (decision) enqueue.emit(decision);
    }),
    /** A decision for a wait that is not the open one: refused, recorded, and the session waits on as before. */
    refuseClosedWait: enqueueActions(({ context, event, enqueue }, { reason }: { reason: WaitingReason }) => {
      const state = `waiting_user.${reason}`;
      const rejection = closedWaitRejection(context, event, state);
      enqueue.assign(update.recordRejection(context, rejection));
      enqueue.emit({ type: 'user_event_refused', eventType: event.type, reason: rejection.reason, code: 'wait_closed' });
      enqueue.emit({ type: 'waiting', reason, state, wait: context.waits.opened });
    }),
    /** A decision by someone in none of the groups the open wait names: refused, recorded, and the session waits on. */
    refuseNotADecider: enqueueActions(({ context, event, enqueue }, { reason }: { reason: WaitingReason }) => {
      const state = `waiting_user.${reason}`;
      const message = notADeciderMessage(context, event as { type: string; by?: unknown });
      enqueue.assign(update.recordRejection(context, { type: event.type, state, reason: message, code: 'not_a_decider', ...stampOf(event) }));
      enqueue.emit({ type: 'user_event_refused', eventType: event.type, reason: message, code: 'not_a_decider' });
      enqueue.emit({ type: 'waiting', reason, state, wait: context.waits.opened });
    }),

    // A deadline of the open wait passed (deadlines.ts, deadline-outcomes.ts): each outcome
    // says so (`deadline_passed`) before it changes anything.
    expireStep: enqueueActions(({ context, event, enqueue }) => {
      enqueue.emit(report.deadlinePassed(context, 'approve_step', event as DeadlinePassedEvent));
      enqueue.assign(deadline.expireStep(context));
    }),
    expireArtifact: enqueueActions(({ context, event, enqueue }) => {
      enqueue.emit(report.deadlinePassed(context, 'review_artifact', event as DeadlinePassedEvent));
      enqueue.assign(deadline.expireArtifact(context));
    }),
    expireToolCalls: enqueueActions(({ context, event, enqueue }) => {
      enqueue.emit(report.deadlinePassed(context, 'approve_tool', event as DeadlinePassedEvent));
      enqueue.assign(deadline.expireToolCalls(context));
    }),
    /** The wait re-opens for the group the rule names: a new wait (its number is the next), the chain's next rule. */
    escalateWait: enqueueActions(({ context, event, check, enqueue }) => {
      const reason = openReason(check);
      enqueue.emit(report.deadlinePassed(context, reason, event as DeadlinePassedEvent));
      const decision = report.decisionMade(context, reason, event);
      if (decision) enqueue.emit(decision);
      const escalated = deadline.escalateWait(context, reason, event);
      enqueue.assign(escalated);
      const state = `waiting_user.${reason}`;
      enqueue.emit({ type: 'waiting', reason, state, wait: escalated.waits!.opened });
    }),
    /** People are told again; the wait stays as it was, with the chain's next rule. */
    remindOfWait: enqueueActions(({ context, event, check, enqueue }) => {
      const reason = openReason(check);
      enqueue.emit(report.deadlinePassed(context, reason, event as DeadlinePassedEvent));
      enqueue.assign(deadline.remindOfWait(context, reason));
      enqueue.emit({ type: 'waiting', reason, state: `waiting_user.${reason}`, wait: context.waits.opened });
    }),
    /** A deadline for a wait or a rule no longer current (answered, escalated, reminded already): refused, recorded, nothing changes. */
    refuseStaleDeadline: enqueueActions(({ context, event, check, enqueue }) => {
      const reason = openReason(check);
      const state = `waiting_user.${reason}`;
      const message = staleDeadlineMessage(context, event as DeadlinePassedEvent);
      enqueue.assign(update.recordRejection(context, { type: event.type, state, reason: message, code: 'deadline_stale', ...stampOf(event) }));
    }),
    announceDone: emit(({ context }) => ({ type: 'done' as const, summary: context.message })),

    // A fan-out (team.ts): several independent workers, each an item, run at once as branches.
    proposeTeam: assign(({ context }) => team.proposeTeam(context)),
    approveTeamStep: assign(({ context, event }) => {
      assertEvent(event, 'user_approved_next_step');
      return team.approveTeamStep(context, event.item!, event.edits, event.by);
    }),
    rejectTeamStep: assign(({ context, event }) => {
      assertEvent(event, 'user_rejected_next_step');
      return team.rejectTeamStep(context, event.item!, event.reason);
    }),
    expireTeamSteps: enqueueActions(({ context, event, enqueue }) => {
      enqueue.emit(report.deadlinePassed(context, 'approve_step', event as DeadlinePassedEvent));
      enqueue.assign(team.expireTeamSteps(context));
    }),
    /** The approved branches start together: each one's model round is an actor of its own (`branch:<item>`). */
    startBranches: enqueueActions(({ context, enqueue }) => {
      const started = { ...context, ...team.startBranches(context) };
      for (const branch of team.branchesIn(context, 'approved')) {
        const running = team.branchOf(started, branch.item);
        if (!running) continue; // no room in the burst: it stopped (the notice below)
        const input = team.branchContext(context, running);
        enqueue.emit({ type: 'round_started', ...report.roundOf(input, 'worker'), round: running.round! });
        enqueue.spawnChild('workerTurn', { id: team.branchActorId(branch.item), input });
      }
      enqueue.assign(started);
      if (started.notice !== context.notice) enqueue.emit(noticed(started));
    }),
    /** A branch's round replied: the branch is focused, and its reply goes through the worker rules like a single worker's. */
    acceptBranchReply: enqueueActions(({ context, event, enqueue }) => {
      const { output, actorId } = event as unknown as { output: TurnOutput; actorId: string };
      enqueue.stopChild(actorId);
      const item = team.itemOfActor(actorId)!;
      const { round } = team.branchOf(context, item)!;
      const focused = { ...context, ...team.focusBranch(context, item) };
      const accepted = { ...focused, ...update.acceptReply(focused, 'worker', output) };
      enqueue.assign(accepted);
      enqueue.emit({ ...report.roundReplied(accepted, 'worker', output), ...(round ? { round } : {}) });
    }),
    /** Nothing in the reply ended the branch: its next round starts. */
    nextBranchRound: enqueueActions(({ context, enqueue }) => {
      const item = context.team!.focus!.item;
      const parked = { ...context, ...team.nextBranchRound(context) };
      const running = team.branchOf(parked, item)!;
      const input = team.branchContext(parked, running);
      enqueue.assign(parked);
      enqueue.emit({ type: 'round_started', ...report.roundOf(input, 'worker'), round: running.round! });
      enqueue.spawnChild('workerTurn', { id: team.branchActorId(item), input });
    }),
    holdBranch: assign(({ context }) => team.holdBranch(context)),
    publishBranchArtifact: enqueueActions(({ context, enqueue }) => {
      const published = update.publishArtifact(context);
      const event = report.artifactPublished({ ...context, ...published });
      enqueue.assign(team.publishBranchArtifact(context));
      if (event) enqueue.emit(event);
    }),
    askBranch: assign(({ context }) => team.askBranch(context)),
    stopBranchAtBurst: enqueueActions(({ context, enqueue }) => {
      const changes = update.noticeWorkerBurstLimit(context);
      enqueue.assign(team.stopBranch(context, changes));
      enqueue.emit(noticed(changes));
    }),
    stopBranchAtBudget: enqueueActions(({ context, enqueue }) => {
      const changes = update.noticeWorkerTokenBudget(context);
      enqueue.assign(team.stopBranch(context, changes));
      enqueue.emit(noticed(changes));
    }),
    /** A branch's model call failed: it stops (the manager hears why), the others go on. */
    stopFailedBranch: enqueueActions(({ context, event, enqueue }) => {
      const { error, actorId } = event as unknown as { error: unknown; actorId: string };
      enqueue.stopChild(actorId);
      const item = team.itemOfActor(actorId)!;
      const { round } = team.branchOf(context, item)!;
      const focused = { ...context, ...team.focusBranch(context, item) };
      enqueue.emit({ ...report.roundFailed(focused, 'worker', error), ...(round ? { round } : {}) });
      const changes = update.noticeWorkerFailure(focused, error);
      enqueue.assign(team.stopBranch(focused, changes));
      enqueue.emit(noticed(changes));
    }),
    acceptTeamArtifact: assign(({ context, event }) => {
      assertEvent(event, 'user_accepted_artifact');
      return team.settleTeamArtifact(context, event.artifactId, update.acceptArtifact(context, event.artifactId, event.edits, event.at, event.by));
    }),
    rejectTeamArtifact: assign(({ context, event }) => {
      assertEvent(event, 'user_rejected_artifact');
      return team.rejectTeamArtifact(context, event.artifactId, event.reason, event.by);
    }),
    expireTeamArtifacts: enqueueActions(({ context, event, enqueue }) => {
      enqueue.emit(report.deadlinePassed(context, 'review_artifact', event as DeadlinePassedEvent));
      enqueue.assign(team.expireTeamArtifacts(context, expiryReason(context.waits.deadline)));
    }),
    /** A person decided one item of a fan-out's wait, which stays open for the others (the last one's decision closes it, closeWait). */
    reportItemDecision: emit(({ context, event }, { reason }: { reason: WaitingReason }) => report.decisionMade(context, reason, event)!),
    /** The next held branch goes on alone, as the session's worker. */
    resumeHeldBranch: assign(({ context }) => team.resumeHeldBranch(context)),

    /**
     * Root wildcard: an event no active state takes is recorded with its reason, never
     * dropped. An action sees no snapshot, so the refusal asks XState which states of the
     * chart are active (`stateIn`): the same under a pure `transition()`, a graph walk and a
     * running actor.
     */
    recordRejection: enqueueActions(({ context, event, check, enqueue }) => {
      const nodes = activeNodesAsked(chart(), (id) => check(stateIn(`#${id}`) as Parameters<typeof check>[0]));
      const { state, refusal } = readChart(nodes, context, event);
      const [region, waitingReason] = state.split('.');
      const waiting = region === 'waiting_user';
      // A decision for a closed wait that the state has no transition for (the session moved on
      // to a wait of another kind, or runs) is refused as such, like on the waiting states' own edges.
      if (namesClosedWait(context, event, waiting)) {
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
      if (waiting) enqueue.emit({ type: 'waiting', reason: waitingReason as WaitingReason, state, wait: context.waits.opened });
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
    team: null,
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
      on: {
        // Targetless: the session keeps waiting where it waited, on the new package version.
        package_upgraded: { guard: 'upgradeKeepsWait', actions: 'upgradePackage' },
        // The runtime's timer: a deadline of the open wait passed (deadlines.ts). A decision
        // wait rejects on its own edge; here the wait re-opens for another group, or people are
        // reminded, or (a wait or rule no longer current: a timer fired twice) nothing happens.
        deadline_passed: [
          { guard: 'deadlineEscalates', actions: 'escalateWait' },
          { guard: 'deadlineReminds', actions: 'remindOfWait' },
          { actions: 'refuseStaleDeadline' },
        ],
      },
      states: {
        skill_selection: {
          entry: { type: 'openWait', params: { reason: 'skill_selection' } },
          exit: { type: 'closeWait', params: { reason: 'skill_selection' } },
          on: {
            user_selected_package: [
              { guard: 'namesClosedWait', actions: { type: 'refuseClosedWait', params: { reason: 'skill_selection' } } },
              { guard: 'packageIsKnown', target: 'intake', actions: 'selectPackage' },
            ],
          },
        },
        intake: {
          entry: { type: 'openWait', params: { reason: 'intake' } },
          exit: { type: 'closeWait', params: { reason: 'intake' } },
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
          entry: { type: 'openWait', params: { reason: 'input' } },
          exit: { type: 'closeWait', params: { reason: 'input' } },
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
          entry: { type: 'openWait', params: { reason: 'approve_step' } },
          exit: { type: 'closeWait', params: { reason: 'approve_step' } },
          on: {
            user_approved_next_step: [
              { guard: 'namesClosedWait', actions: { type: 'refuseClosedWait', params: { reason: 'approve_step' } } },
              { guard: 'notADecider', actions: { type: 'refuseNotADecider', params: { reason: 'approve_step' } } },
              // A fan-out's steps are decided one by one (`item`); the last decision starts the approved ones together.
              { guard: 'decidesLastTeamStep', target: '#session.running.team', actions: ['resetBurst', 'approveTeamStep'] },
              { guard: 'decidesTeamStep', actions: [{ type: 'reportItemDecision', params: { reason: 'approve_step' } }, 'approveTeamStep'] },
              {
                guard: 'editedRoleIsWorkers',
                target: '#session.running.worker',
                actions: ['resetBurst', 'approveStep', 'startWorkerRun'],
              },
            ],
            user_rejected_next_step: [
              { guard: 'namesClosedWait', actions: { type: 'refuseClosedWait', params: { reason: 'approve_step' } } },
              { guard: 'notADecider', actions: { type: 'refuseNotADecider', params: { reason: 'approve_step' } } },
              { guard: 'decidesLastTeamStep', target: '#session.running.team', actions: ['resetBurst', 'rejectTeamStep'] },
              { guard: 'decidesTeamStep', actions: [{ type: 'reportItemDecision', params: { reason: 'approve_step' } }, 'rejectTeamStep'] },
              { guard: 'isStepProposed', target: '#session.running.manager', actions: ['resetBurst', 'tellManagerStepRejected'] },
            ],
            deadline_passed: [
              { guard: 'deadlineRejectsItems', target: '#session.running.team', actions: ['resetBurst', 'expireTeamSteps'] },
              { guard: 'deadlineRejects', target: '#session.running.manager', actions: ['resetBurst', 'expireStep'] },
            ],
          },
        },
        review_artifact: {
          entry: { type: 'openWait', params: { reason: 'review_artifact' } },
          exit: { type: 'closeWait', params: { reason: 'review_artifact' } },
          on: {
            user_accepted_artifact: [
              { guard: 'namesClosedWait', actions: { type: 'refuseClosedWait', params: { reason: 'review_artifact' } } },
              { guard: 'notADecider', actions: { type: 'refuseNotADecider', params: { reason: 'review_artifact' } } },
              // A fan-in's artifacts are decided one by one; after the last, the held workers go on, then the manager.
              { guard: 'decidesLastTeamArtifact', target: '#session.running.team.joining', actions: ['resetBurst', 'acceptTeamArtifact'] },
              { guard: 'decidesTeamArtifact', actions: [{ type: 'reportItemDecision', params: { reason: 'review_artifact' } }, 'acceptTeamArtifact'] },
              { guard: 'editsWithinArtifactTags', target: '#session.running.manager', actions: ['resetBurst', 'acceptArtifact'] },
            ],
            user_rejected_artifact: [
              { guard: 'namesClosedWait', actions: { type: 'refuseClosedWait', params: { reason: 'review_artifact' } } },
              { guard: 'notADecider', actions: { type: 'refuseNotADecider', params: { reason: 'review_artifact' } } },
              { guard: 'decidesLastTeamArtifact', target: '#session.running.team.joining', actions: ['resetBurst', 'rejectTeamArtifact'] },
              { guard: 'decidesTeamArtifact', actions: [{ type: 'reportItemDecision', params: { reason: 'review_artifact' } }, 'rejectTeamArtifact'] },
              { guard: 'isArtifactUnderReview', target: 'revision', actions: ['resetBurst', 'rejectArtifact'] },
            ],
            deadline_passed: [
              { guard: 'deadlineRejectsItems', target: '#session.running.team.joining', actions: ['resetBurst', 'expireTeamArtifacts'] },
              { guard: 'deadlineRejects', target: 'revision', actions: ['resetBurst', 'expireArtifact'] },
            ],
          },
        },
        worker_questions: {
          entry: { type: 'openWait', params: { reason: 'worker_questions' } },
          exit: { type: 'closeWait', params: { reason: 'worker_questions' } },
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
          entry: { type: 'openWait', params: { reason: 'revision' } },
          exit: { type: 'closeWait', params: { reason: 'revision' } },
          on: {
            user_submitted_input: [
              { guard: 'namesClosedWait', actions: { type: 'refuseClosedWait', params: { reason: 'revision' } } },
              { target: '#session.running.worker', actions: ['resetBurst', 'startRevision'] },
            ],
          },
        },
        // Each call is decided on its own, over as many sends as it takes; a decision that is
        // not the last keeps the wait open (targetless). The last one lets the approved calls run.
        approve_tool: {
          entry: { type: 'openWait', params: { reason: 'approve_tool' } },
          exit: { type: 'closeWait', params: { reason: 'approve_tool' } },
          on: {
            user_approved_tool_call: [
              { guard: 'namesClosedWait', actions: { type: 'refuseClosedWait', params: { reason: 'approve_tool' } } },
              { guard: 'notADecider', actions: { type: 'refuseNotADecider', params: { reason: 'approve_tool' } } },
              { guard: 'decidesLastToolCall', target: '#session.running.worker.routing', actions: ['resetBurst', 'decideToolCall'] },
              { guard: 'decidesToolCall', actions: 'decideToolCall' },
            ],
            user_rejected_tool_call: [
              { guard: 'namesClosedWait', actions: { type: 'refuseClosedWait', params: { reason: 'approve_tool' } } },
              { guard: 'notADecider', actions: { type: 'refuseNotADecider', params: { reason: 'approve_tool' } } },
              { guard: 'decidesLastToolCall', target: '#session.running.worker.routing', actions: ['resetBurst', 'decideToolCall'] },
              { guard: 'decidesToolCall', actions: 'decideToolCall' },
            ],
            // Expired: every call not yet decided is rejected; the approved ones run.
            deadline_passed: { guard: 'deadlineRejects', target: '#session.running.worker.routing', actions: ['resetBurst', 'expireToolCalls'] },
          },
        },
        // The server of the call under way asked a person for input (MCP elicitation): a form
        // or a page to visit. Accept, decline and cancel are all answers; the call goes on with them.
        tool_input: {
          entry: { type: 'openWait', params: { reason: 'tool_input' } },
          exit: { type: 'closeWait', params: { reason: 'tool_input' } },
          on: {
            user_answered_tool_input: [
              { guard: 'namesClosedWait', actions: { type: 'refuseClosedWait', params: { reason: 'tool_input' } } },
              { guard: 'notADecider', actions: { type: 'refuseNotADecider', params: { reason: 'tool_input' } } },
              { guard: 'answersToolInput', target: '#session.running.worker.routing', actions: ['resetBurst', 'answerToolInput'] },
            ],
          },
        },
        // The process running a call stopped before it finished, so it may or may not have taken
        // effect: it is not repeated without a person, who runs it again (approve), skips it
        // (reject: the model is told) or gives its result by hand.
        tool_interrupted: {
          entry: { type: 'openWait', params: { reason: 'tool_interrupted' } },
          exit: { type: 'closeWait', params: { reason: 'tool_interrupted' } },
          on: {
            user_approved_tool_call: [
              { guard: 'namesClosedWait', actions: { type: 'refuseClosedWait', params: { reason: 'tool_interrupted' } } },
              { guard: 'notADecider', actions: { type: 'refuseNotADecider', params: { reason: 'tool_interrupted' } } },
              { guard: 'settlesInterruptedCall', target: '#session.running.worker.routing', actions: ['resetBurst', 'decideToolCall'] },
            ],
            user_rejected_tool_call: [
              { guard: 'namesClosedWait', actions: { type: 'refuseClosedWait', params: { reason: 'tool_interrupted' } } },
              { guard: 'notADecider', actions: { type: 'refuseNotADecider', params: { reason: 'tool_interrupted' } } },
              { guard: 'settlesInterruptedCall', target: '#session.running.worker.routing', actions: ['resetBurst', 'decideToolCall'] },
            ],
            user_gave_tool_result: [
              { guard: 'namesClosedWait', actions: { type: 'refuseClosedWait', params: { reason: 'tool_interrupted' } } },
              { guard: 'notADecider', actions: { type: 'refuseNotADecider', params: { reason: 'tool_interrupted' } } },
              { guard: 'settlesInterruptedCall', target: '#session.running.worker.routing', actions: ['resetBurst', 'giveToolResult'] },
            ],
          },
        },
      },
    },

    running: {
      initial: 'manager',
      states: {
        manager: {
          initial: 'starting',
          states: {
            // Transient: a worker of a fan-out that still waits (held) goes on before the manager's next round.
            // After a fan-in its branches' rounds count: the manager's round, like any, starts only within the
            // burst (rule 6) and the token budget, else the user is asked (without it a fan-out whose branches
            // stop at the limit hands back to a manager that fans out again, with no user action ever).
            starting: {
              always: [
                { guard: 'branchHeld', target: '#session.running.team.resuming' },
                { guard: 'burstUsedUp', target: '#session.waiting_user.input', actions: 'noticeBurstLimit' },
                { guard: 'burstTokensWithinBudget', target: 'thinking' },
                { target: '#session.waiting_user.input', actions: 'noticeTokenBudget' },
              ],
            },
            thinking: {
              entry: [
                { type: 'announceState', params: { state: 'running.manager.thinking' } },
                { type: 'announceRound', params: { actor: 'manager' } },
              ],
              invoke: {
                id: 'managerTurn',
                src: 'managerTurn',
                input: ({ context }) => context,
                onDone: { target: 'checking', actions: { type: 'acceptReply', params: { actor: 'manager' } } },
                onError: { target: '#session.waiting_user.input', actions: 'noticeManagerFailure' },
              },
            },
            // Each pass checks the head of the queue against the rules, in the order of these edges
            // (the tool contract's order, rule 5 before 2 so that a passed inputTags gets its own
            // message), and refuses it or settles it.
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
                {
                  guard: { type: 'breaksRule', params: { actor: 'manager', rule: 'workersIndependent' } },
                  actions: { type: 'refuseCall', params: { actor: 'manager', rule: 'workersIndependent' } },
                },
                { guard: 'moreCallsQueued', actions: 'settleCall' },
                // The last call passed the rules (or none is left): settled, the reply is routed.
                { target: 'routing', actions: 'settleCall' },
              ],
            },
            // Transient: where the settled reply leads, by the boundary tool it chose.
            routing: {
              always: [
                // Several independent workers (a fan-out): one wait with an item per step, or they start together.
                { guard: 'fanOutNeedsApproval', target: '#session.waiting_user.approve_step', actions: 'proposeTeam' },
                { guard: 'choseFanOut', target: '#session.running.team', actions: 'proposeTeam' },
                { guard: 'stepNeedsApproval', target: '#session.waiting_user.approve_step', actions: { type: 'proposeStep', params: { waits: true } } },
                { guard: 'choseWorkerRun', target: '#session.running.worker', actions: [{ type: 'proposeStep', params: { waits: false } }, 'startWorkerRun'] },
                { guard: 'choseClarification', target: '#session.waiting_user.intake', actions: 'showManagerMessage' },
                { guard: 'choseUserTurn', target: '#session.waiting_user.input', actions: 'showManagerMessage' },
                { guard: 'choseFinish', target: '#session.done', actions: 'showManagerMessage' },
                // Only loop tools (or refused calls) in this reply: the burst goes on — unless it
                // is used up (rule 6), checked here because only this edge starts another round.
                { guard: 'burstUsedUp', target: '#session.waiting_user.input', actions: 'noticeBurstLimit' },
                { guard: 'burstTokensWithinBudget', target: 'thinking' },
                { target: '#session.waiting_user.input', actions: 'noticeTokenBudget' },
              ],
            },
          },
        },

        worker: {
          initial: 'starting',
          states: {
            // Transient: another model round starts unless the burst or the token budget is used up.
            starting: {
              always: [
                { guard: 'burstUsedUp', target: '#session.waiting_user.input', actions: 'noticeWorkerBurstLimit' },
                { guard: 'burstTokensUsedUp', target: '#session.waiting_user.input', actions: 'noticeWorkerTokenBudget' },
                { target: 'thinking' },
              ],
            },
            thinking: {
              entry: [
                { type: 'announceState', params: { state: 'running.worker.thinking' } },
                { type: 'announceRound', params: { actor: 'worker' } },
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
                // A branch's reply (a fan-out) is routed by the team.
                { guard: 'checksBranch', target: '#session.running.team.routing', actions: 'settleWorkerCall' },
                { target: 'routing', actions: 'settleWorkerCall' },
              ],
            },
            // Transient: where the settled reply leads. Its MCP tool calls first: a person decides
            // those that need it, then the approved ones run; then what the worker chose.
            routing: {
              always: [
                { guard: 'toolCallsAwaitDecision', target: '#session.waiting_user.approve_tool' },
                { guard: 'toolCallReady', target: 'calling' },
                { guard: 'workerSubmitted', target: '#session.waiting_user.review_artifact', actions: 'publishArtifact' },
                { guard: 'workerAsked', target: '#session.waiting_user.worker_questions', actions: 'askWorkerQuestions' },
                // Nothing usable in this reply, or only tool calls: the worker's next round (the round counted).
                { target: 'starting' },
              ],
            },
            // The first approved call of the reply runs (tool-calls.ts: nextToolCall, the one way
            // to a server); its result, or what went wrong, is the call's tool result.
            calling: {
              entry: [{ type: 'announceState', params: { state: 'running.worker.calling' } }, 'announceToolCall'],
              invoke: {
                id: 'toolCall',
                src: 'toolCall',
                input: ({ context }) => tools.nextToolCall(context),
                onDone: [
                  { guard: 'toolDefinitionChanged', target: 'routing', actions: 'reopenChangedTool' },
                  { guard: 'toolAskedForInput', target: '#session.waiting_user.tool_input', actions: 'askForToolInput' },
                  { guard: 'toolCallInterrupted', target: '#session.waiting_user.tool_interrupted', actions: 'holdInterruptedCall' },
                  { target: 'routing', actions: 'recordToolResult' },
                ],
                onError: { target: 'routing', actions: 'recordToolFailure' },
              },
            },
          },
        },

        // A fan-out (team.ts): independent workers run at once, each branch's model round an
        // actor of its own (`branch:<item>`). Each reply is checked by the worker's rules
        // (`worker.checking`, the branch focused for that pass) and routed here.
        team: {
          initial: 'starting',
          states: {
            // Transient: the approved branches start together, as far as the burst has room (none
            // approved, or no room: joining finds none running and goes on).
            starting: {
              always: { target: 'joining', actions: 'startBranches' },
            },
            working: {
              entry: { type: 'announceState', params: { state: 'running.team.working' } },
              on: {
                'xstate.done.actor.*': { guard: 'isBranchTurn', target: '#session.running.worker.checking', actions: 'acceptBranchReply' },
                'xstate.error.actor.*': { guard: 'isBranchTurn', target: 'joining', actions: 'stopFailedBranch' },
              },
            },
            // Transient: where a branch's settled reply leads. MCP tool calls wait for the fan-in
            // (the branch is held, then goes on alone); a submit or questions end the branch.
            routing: {
              always: [
                { guard: 'toolCallsAwaitDecision', target: 'joining', actions: 'holdBranch' },
                { guard: 'toolCallReady', target: 'joining', actions: 'holdBranch' },
                { guard: 'workerSubmitted', target: 'joining', actions: 'publishBranchArtifact' },
                { guard: 'workerAsked', target: 'joining', actions: 'askBranch' },
                { guard: 'burstUsedUp', target: 'joining', actions: 'stopBranchAtBurst' },
                { guard: 'burstTokensUsedUp', target: 'joining', actions: 'stopBranchAtBudget' },
                { target: 'working', actions: 'nextBranchRound' },
              ],
            },
            // Transient: the fan-in. The session leaves running once no branch runs: the new
            // artifacts are reviewed together, then each held branch goes on alone, then the manager.
            joining: {
              always: [
                { guard: 'branchesRunning', target: 'working' },
                { guard: 'teamArtifactsPending', target: '#session.waiting_user.review_artifact' },
                { guard: 'branchHeld', target: 'resuming' },
                { target: '#session.running.manager' },
              ],
            },
            // Transient: the first held branch, in the order the manager proposed them, continues as the session's worker.
            resuming: {
              always: [
                { guard: 'heldBranchAsked', target: '#session.waiting_user.worker_questions', actions: 'resumeHeldBranch' },
                { target: '#session.running.worker.routing', actions: 'resumeHeldBranch' },
              ],
            },
          },
        },
      },
    },

    done: { type: 'final', entry: [{ type: 'announceState', params: { state: 'done' } }, 'announceDone'] },
  },
});

export type SessionMachine = typeof sessionMachine;
export type { SessionEvent };
