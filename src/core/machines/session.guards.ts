/**
 * The session chart's guards, by name: what each transition of session.machine.ts asks
 * before it is taken. Each reads the context as it is (and, for user events, the event); the
 * rule guards and the user-event guards take their logic and their refusal messages from the
 * one table in rules.ts, the approval guard from approval.ts. Kept beside the chart so that
 * the chart file reads as states and transitions; `sessionMachine.provide({ guards })` swaps
 * any of them.
 */
import type { ToolActor } from '../tools/schemas.js';
import type { ToolCallOutput } from '../tools/server-tools.js';
import { hasApprovedToolCall, hasPendingToolCalls } from './tool-calls.js';
import { stepNeedsApproval } from './approval.js';
import type { PackageUpgradedEvent } from './package-upgrade.js';
import { upgradeProblem } from './package-upgrade.js';
import { EVENT_GUARDS, violationOf, type RuleId } from './rules.js';
import type { SessionContext, TurnOutput } from './session.context.js';
import type { UserEvent } from './session.events.js';
import { namesClosedWait } from './waits.js';
import { branchesIn, branchOf, heldBranchAsked, itemOfActor, nextHeldBranch, plannedSteps, teamArtifactsUnderReview } from './team.js';
import { isCurrentDeadline, mayDecide, type DeadlineOutcome, type DeadlinePassedEvent } from './deadlines.js';

export type DoneTurn = { type: `xstate.done.actor.${'managerTurn' | 'workerTurn'}`; output: TurnOutput };
export type ErrorTurn = { type: `xstate.error.actor.${'managerTurn' | 'workerTurn'}`; error: unknown };
/** A branch's model round (team.ts): its actor is `branch:<item>`. */
export type DoneBranchTurn = { type: `xstate.done.actor.branch:${string}`; output: TurnOutput; actorId: string };
export type ErrorBranchTurn = { type: `xstate.error.actor.branch:${string}`; error: unknown; actorId: string };
export type DoneToolCall = { type: 'xstate.done.actor.toolCall'; output: ToolCallOutput };
export type ErrorToolCall = { type: 'xstate.error.actor.toolCall'; error: unknown };
export type SessionEvent =
  UserEvent | DoneTurn | ErrorTurn | DoneBranchTurn | ErrorBranchTurn | DoneToolCall | ErrorToolCall | PackageUpgradedEvent | DeadlinePassedEvent;
export type RuleParams = { actor: ToolActor; rule: RuleId };

const isUserTurn = ({ reply: { boundary } }: SessionContext) => boundary?.tool === 'ask_user' || boundary?.tool === 'review_blackboard';

/** A user event for the event guards; other events (none reach them) carry no payload they read. */
const asUserEvent = (event: SessionEvent): UserEvent | null => (event.type.startsWith('user_') ? (event as UserEvent) : null);

type GuardArgs = { context: SessionContext; event: SessionEvent };

/** The deadline event is for the open wait's current rule, and that rule says `outcome`. */
const deadlineSays = ({ context, event }: GuardArgs, outcome: DeadlineOutcome) =>
  isCurrentDeadline(context, event, true) && context.waits.deadline?.outcome === outcome;

export const sessionGuards = {
  hasPackage: ({ context }: GuardArgs) => context.package !== null,
  // First on every user event of a waiting state: the event names a wait that is not the open one (waits.ts).
  namesClosedWait: ({ context, event }: GuardArgs) => namesClosedWait(context, event, true),
  // Second on a decision of a wait that names who decides it: the sender is in none of its groups (deadlines.ts).
  notADecider: ({ context, event }: GuardArgs) => !mayDecide(context, event),
  // A deadline of the open wait passed (deadlines.ts): what its current rule says happens.
  deadlineRejects: (args: GuardArgs) => deadlineSays(args, 'reject'),
  deadlineEscalates: (args: GuardArgs) => deadlineSays(args, 'escalate'),
  deadlineReminds: (args: GuardArgs) => deadlineSays(args, 'remind'),
  // The guards on user events and their refusal messages: EVENT_GUARDS (rules.ts).
  packageIsKnown: ({ context, event }: GuardArgs) => EVENT_GUARDS.packageIsKnown.refusal(context, asUserEvent(event)) === null,
  hasRequest: ({ context, event }: GuardArgs) => EVENT_GUARDS.hasRequest.refusal(context, asUserEvent(event)) === null,
  hasQuestionCard: ({ context, event }: GuardArgs) => EVENT_GUARDS.hasQuestionCard.refusal(context, asUserEvent(event)) === null,
  isArtifactUnderReview: ({ context, event }: GuardArgs) => EVENT_GUARDS.isArtifactUnderReview.refusal(context, asUserEvent(event)) === null,
  editedRoleIsWorkers: ({ context, event }: GuardArgs) => EVENT_GUARDS.editedRoleIsWorkers.refusal(context, asUserEvent(event)) === null,
  editsWithinArtifactTags: ({ context, event }: GuardArgs) => EVENT_GUARDS.editsWithinArtifactTags.refusal(context, asUserEvent(event)) === null,
  decidesToolCall: ({ context, event }: GuardArgs) => EVENT_GUARDS.decidesToolCall.refusal(context, asUserEvent(event)) === null,
  decidesLastToolCall: ({ context, event }: GuardArgs) => EVENT_GUARDS.decidesLastToolCall.refusal(context, asUserEvent(event)) === null,
  answersToolInput: ({ context, event }: GuardArgs) => EVENT_GUARDS.answersToolInput.refusal(context, asUserEvent(event)) === null,
  settlesInterruptedCall: ({ context, event }: GuardArgs) => EVENT_GUARDS.settlesInterruptedCall.refusal(context, asUserEvent(event)) === null,
  isStepProposed: ({ context, event }: GuardArgs) => EVENT_GUARDS.isStepProposed.refusal(context, asUserEvent(event)) === null,
  decidesTeamStep: ({ context, event }: GuardArgs) => EVENT_GUARDS.decidesTeamStep.refusal(context, asUserEvent(event)) === null,
  decidesLastTeamStep: ({ context, event }: GuardArgs) => EVENT_GUARDS.decidesLastTeamStep.refusal(context, asUserEvent(event)) === null,
  decidesTeamArtifact: ({ context, event }: GuardArgs) => EVENT_GUARDS.decidesTeamArtifact.refusal(context, asUserEvent(event)) === null,
  decidesLastTeamArtifact: ({ context, event }: GuardArgs) => EVENT_GUARDS.decidesLastTeamArtifact.refusal(context, asUserEvent(event)) === null,
  // The items of a fan-out expire together: each one not yet decided is rejected.
  deadlineRejectsItems: (args: GuardArgs) =>
    deadlineSays(args, 'reject') && (branchesIn(args.context, 'proposed').length > 0 || teamArtifactsUnderReview(args.context).length > 0),

  // A fan-out (team.ts): the reply chose several independent workers; they run as branches.
  choseFanOut: ({ context: { reply } }: GuardArgs) => plannedSteps(reply.boundary).length > 1,
  fanOutNeedsApproval: ({ context: { reply } }: GuardArgs) => {
    const planned = plannedSteps(reply.boundary);
    return planned.length > 1 && planned.some((p) => stepNeedsApproval(p.step));
  },
  // The round that ended is a running branch's (its actor is `branch:<item>`).
  isBranchTurn: ({ context, event }: GuardArgs) => branchOf(context, itemOfActor((event as { actorId?: unknown }).actorId))?.status === 'running',
  // The reply under check is a branch's (focused for one pass of the worker rules).
  checksBranch: ({ context }: GuardArgs) => context.team?.focus != null,
  branchesRunning: ({ context }: GuardArgs) => branchesIn(context, 'running').length > 0,
  teamArtifactsPending: ({ context }: GuardArgs) => teamArtifactsUnderReview(context).length > 0,
  branchHeld: ({ context }: GuardArgs) => nextHeldBranch(context) !== undefined,
  heldBranchAsked: ({ context }: GuardArgs) => heldBranchAsked(context),

  // A worker's MCP tool calls (tool-calls.ts): some wait for a person; an approved one runs next;
  // a call whose tool changed on its server since it was approved did not run.
  toolCallsAwaitDecision: ({ context }: GuardArgs) => hasPendingToolCalls(context),
  toolCallReady: ({ context }: GuardArgs) => hasApprovedToolCall(context),
  toolDefinitionChanged: ({ event }: GuardArgs) => event.type === 'xstate.done.actor.toolCall' && event.output?.outcome === 'definition_changed',
  // The server asks a person for input before the call goes on (MCP elicitation).
  toolAskedForInput: ({ event }: GuardArgs) => event.type === 'xstate.done.actor.toolCall' && event.output?.outcome === 'input_required',
  // The call was under way when its process stopped: not repeated without a person.
  toolCallInterrupted: ({ event }: GuardArgs) => event.type === 'xstate.done.actor.toolCall' && event.output?.outcome === 'interrupted',

  // The rule table (rules.ts), checked on the head of the tool-call queue.
  breaksRule: ({ context }: GuardArgs, params: RuleParams) => violationOf(context, params.actor, params.rule) !== null,
  burstUsedUp: ({ context }: GuardArgs) => violationOf(context, 'manager', 'burstWithinLimit') !== null,
  // The token budget (maxBurstTokens), checked before each model call: the manager's next
  // round goes on only within it; a worker's next call is stopped when it is used up.
  burstTokensWithinBudget: ({ context }: GuardArgs) => violationOf(context, 'manager', 'burstTokensWithinBudget') === null,
  burstTokensUsedUp: ({ context }: GuardArgs) => violationOf(context, 'worker', 'burstTokensWithinBudget') !== null,

  moreCallsQueued: ({ context }: GuardArgs) => context.reply.queue.length > 1,
  // `steward upgrade`: the wait in progress must stay valid in the new package version.
  upgradeKeepsWait: ({ context, event }: GuardArgs) => event.type === 'package_upgraded' && upgradeProblem(context, event.package) === null,

  // Where a settled reply leads (`routing`): the boundary tool it chose. A proposed step waits
  // for a person when the approval policy says so (approval.ts): its answer is in the step,
  // fixed when it was proposed.
  stepNeedsApproval: ({ context: { reply } }: GuardArgs) => reply.boundary?.tool === 'run_worker' && stepNeedsApproval(reply.boundary.step),
  choseWorkerRun: ({ context: { reply } }: GuardArgs) => reply.boundary?.tool === 'run_worker',
  choseClarification: ({ context }: GuardArgs) => !context.intakeConfirmed && isUserTurn(context),
  choseUserTurn: ({ context }: GuardArgs) => isUserTurn(context),
  choseFinish: ({ context: { reply } }: GuardArgs) => reply.boundary?.tool === 'finish',
  workerSubmitted: ({ context: { reply } }: GuardArgs) => reply.workerChoice.outputs !== undefined,
  workerAsked: ({ context: { reply } }: GuardArgs) => reply.workerChoice.questions !== undefined,
};
