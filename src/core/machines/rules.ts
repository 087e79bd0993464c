/**
 * The rule table: the tool contract's six validation rules plus Steward's own, once each and
 * in the contract's order. The machine's guards (`breaksRule`, `burstUsedUp`), the message a
 * refused tool call gets, the inspector's labels and the docs all come from here, so a rule
 * is changed in one place.
 */
import { REQUEST_TAG } from '../blackboard/blackboard.js';
import type { QueuedCall } from '../tools/reply.js';
import { findTool, type ToolActor } from '../tools/schemas.js';
import {
  checkActorMayUseTool,
  checkArgumentsMatchSchema,
  checkServerToolArguments,
  checkBurstWithinLimit,
  checkManagerOmitsTagLists,
  checkTagsWithinOutputTags,
  checkWorkerIsRegistered,
  type Finding,
} from '../tools/validation.js';
import type { SessionContext } from './session.context.js';
import { askingToolCall, interruptedToolCall, offeredToolNames, pendingToolCalls, verdictOf } from './tool-calls.js';
import type { UserEvent } from './session.events.js';
import { CLOSED_WAIT_GUARD } from './waits.js';
import { branchesIn, roundsUnderWay, teamArtifactsUnderReview } from './team.js';
import { independent, ofItems, teamArtifactRefusal, teamStepRefusal } from './fan-out-rules.js';

export type RuleId =
  | 'actorMayUseTool'
  | 'argumentsMatchSchema'
  | 'workerIsRegistered'
  | 'tagsWithinOutputTags'
  | 'managerOmitsTagLists'
  | 'burstWithinLimit'
  | 'burstTokensWithinBudget'
  | 'oneBoundaryPerReply'
  | 'workersIndependent';

/** A broken rule: which one, the message the model (or the user) gets, and its facts. */
export interface Violation {
  rule: RuleId;
  message: string;
  data: Record<string, unknown>;
}

export interface Rule {
  id: RuleId;
  /** The rule's number in the tool contract (1–6); null for Steward's own rules (token budget, one boundary per reply). */
  contractRule: number | null;
  actors: readonly ToolActor[];
  /** What the inspector and the diagrams print on the refusal edge. */
  label: string;
  /** One sentence for the docs. */
  doc: string;
  /** Null when the rule holds for the head of the tool-call queue (or, rule 6, for the burst). */
  check(context: SessionContext, actor: ToolActor): Violation | null;
}

function outputTagsOfStep(context: SessionContext): string[] {
  const workerId = context.step?.workerId;
  return context.package?.workers.find((w) => w.id === workerId)?.outputTags ?? [];
}

const headKind = (context: SessionContext, actor: ToolActor) => {
  const head = context.reply.queue[0];
  return head && findTool(actor, head.call.function.name)?.kind;
};

/** A rule on the head of the queue; an empty queue has nothing to refuse. */
function onHead(rule: RuleId, find: (call: QueuedCall, context: SessionContext, actor: ToolActor) => Finding | null) {
  return (context: SessionContext, actor: ToolActor): Violation | null => {
    const head = context.reply.queue[0];
    const found = head === undefined ? null : find(head, context, actor);
    return found && { rule, ...found };
  };
}

function oneBoundary(call: QueuedCall, context: SessionContext, actor: ToolActor): Finding | null {
  const tool = call.call.function.name;
  // A worker's MCP tools are loop tools: a reply may call any number of them.
  if (actor === 'worker' && tool !== 'submit' && tool !== 'ask_user') return null;
  // Several run_worker calls may form a fan-out: workersIndependent decides whether this one joins.
  if (actor === 'manager' && tool === 'run_worker' && context.reply.boundary?.tool === 'run_worker') return null;
  const already =
    actor === 'manager'
      ? context.reply.boundary !== null && headKind(context, 'manager') === 'boundary'
      : tool === 'submit'
        ? context.reply.workerChoice.outputs !== undefined
        : context.reply.workerChoice.questions !== undefined;
  if (!already) return null;
  const what = actor === 'manager' ? 'boundary tool' : `${tool} call`;
  return {
    message: `Only one ${what} runs per reply, and this reply already chose one. Call ${tool} again in a later turn if it is still needed.`,
    data: { tool, chosen: actor === 'manager' ? context.reply.boundary?.tool : tool },
  };
}

export const RULES: readonly Rule[] = [
  {
    id: 'actorMayUseTool',
    contractRule: 1,
    actors: ['manager', 'worker'],
    label: 'rule 1: actor may use the tool',
    doc:
      'The tool exists for this actor: a manager cannot submit or accept, a worker cannot run_worker; user actions are never tools. ' +
      "A worker's MCP tools are those its front matter names and its turn offered.",
    check: onHead('actorMayUseTool', (call, context, actor) =>
      actor === 'worker' && verdictOf(context, call) ? null : checkActorMayUseTool(actor, call, actor === 'worker' ? offeredToolNames(context) : []),
    ),
  },
  {
    id: 'argumentsMatchSchema',
    contractRule: 2,
    actors: ['manager', 'worker'],
    label: "rule 2: arguments match the tool's schema",
    doc: "The arguments are JSON and match the tool's zod schema (an MCP tool's: its input schema, checked with the MCP SDK's validator).",
    check: onHead('argumentsMatchSchema', (call, context, actor) => {
      const verdict = actor === 'worker' ? verdictOf(context, call) : undefined;
      return verdict ? checkServerToolArguments(call, verdict.argumentsError) : checkArgumentsMatchSchema(actor, call);
    }),
  },
  {
    id: 'workerIsRegistered',
    contractRule: 3,
    actors: ['manager'],
    label: 'rule 3: the worker is registered',
    doc: "run_worker names a worker of the package (and, if given, one of that worker's roles).",
    check: onHead('workerIsRegistered', (call, context) => checkWorkerIsRegistered(call, context.package?.workers ?? [])),
  },
  {
    id: 'tagsWithinOutputTags',
    contractRule: 4,
    actors: ['worker'],
    label: 'rule 4: tags within the output tags',
    doc: "A submit writes only the worker's declared output tags.",
    check: onHead('tagsWithinOutputTags', (call, context) => checkTagsWithinOutputTags(call, outputTagsOfStep(context))),
  },
  {
    id: 'managerOmitsTagLists',
    contractRule: 5,
    actors: ['manager'],
    label: 'rule 5: the manager omits tag lists',
    doc: "The manager does not pass inputTags / outputTags to run_worker: the runtime reads them from the worker's skill.",
    check: onHead('managerOmitsTagLists', (call, _context, actor) => checkManagerOmitsTagLists(actor, call)),
  },
  {
    id: 'burstWithinLimit',
    contractRule: 6,
    actors: ['manager', 'worker'],
    label: 'rule 6: burst used up',
    doc:
      'Another model round runs only while the burst (rounds since the last user action, those of a fan-out under way included) is below ' +
      'maxBurst; else the session waits for the user with a notice.',
    check: (context) => {
      const found = checkBurstWithinLimit(context.burst + roundsUnderWay(context), context.maxBurst);
      return found && { rule: 'burstWithinLimit', ...found };
    },
  },
  {
    id: 'burstTokensWithinBudget',
    contractRule: null,
    actors: ['manager', 'worker'],
    label: 'burst tokens within budget',
    doc:
      'With maxBurstTokens set, another model call starts only if the tokens of this burst plus those of ' +
      'the last call (the estimate of the next) stay within it; else the session waits for the user with a ' +
      'notice.',
    check: (context) => {
      const found = checkBurstTokens(context);
      return found && { rule: 'burstTokensWithinBudget', ...found };
    },
  },
  {
    id: 'oneBoundaryPerReply',
    contractRule: null,
    actors: ['manager', 'worker'],
    label: 'one boundary per reply',
    doc: 'A reply takes one boundary tool (manager; several run_worker calls may form a fan-out), one submit and one ask_user (worker); a second one is refused.',
    check: onHead('oneBoundaryPerReply', oneBoundary),
  },
  {
    id: 'workersIndependent',
    contractRule: null,
    actors: ['manager'],
    label: 'workers run together are independent',
    doc:
      'Several run_worker calls in one reply run at once when their workers are independent: every input tag on the blackboard, ' +
      'no tag written by two of them, none reading what another writes. A call that is not is refused with the tag that ties it; the others go on.',
    check: onHead('workersIndependent', independent),
  },
];

/** The notice when the token budget stops a burst: what was used, and how to go on or raise it. */
export function burstTokensNotice(used: number, next: number, max: number): string {
  return (
    `This burst used ${used} tokens; the next model call (about ${next}, like the last one) would go ` +
    `over the budget of ${max} tokens per burst (maxBurstTokens). ` +
    'Nothing was lost: say how to continue and the count starts again from 0, or raise the budget ' +
    '(createSession({ maxBurstTokens }), steward run/new --max-burst-tokens N).'
  );
}

function checkBurstTokens(context: SessionContext): { message: string; data: Record<string, unknown> } | null {
  // Every context has a ledger (the v2 → v3 migration gives an old one its own, with no budget).
  const ledger = context.ledger;
  if (ledger.maxBurstTokens === null || ledger.burstTokens === 0) return null;
  // A fan-out's rounds under way will each cost about as much as the last call.
  if (ledger.burstTokens + ledger.lastCallTokens * (1 + roundsUnderWay(context)) <= ledger.maxBurstTokens) return null;
  return {
    message: burstTokensNotice(ledger.burstTokens, ledger.lastCallTokens, ledger.maxBurstTokens),
    data: { burstTokens: ledger.burstTokens, lastCallTokens: ledger.lastCallTokens, maxBurstTokens: ledger.maxBurstTokens },
  };
}

export const ruleById = Object.fromEntries(RULES.map((r) => [r.id, r])) as Readonly<Record<RuleId, Rule>>;

/** The rule's check of the head call (or, rule 6 and the token budget, of the burst). */
export function violationOf(context: SessionContext, actor: ToolActor, rule: RuleId): Violation | null {
  return ruleById[rule].check(context, actor);
}

// ── guards on user events ─────────────────────────────────────────────────────

export type EventGuardId =
  | 'packageIsKnown'
  | 'hasRequest'
  | 'hasQuestionCard'
  | 'isArtifactUnderReview'
  | 'editedRoleIsWorkers'
  | 'editsWithinArtifactTags'
  | 'isStepProposed'
  | 'decidesTeamStep'
  | 'decidesLastTeamStep'
  | 'decidesTeamArtifact'
  | 'decidesLastTeamArtifact'
  | 'decidesToolCall'
  | 'decidesLastToolCall'
  | 'answersToolInput'
  | 'settlesInterruptedCall';

export interface EventGuard {
  id: EventGuardId;
  label: string;
  doc: string;
  /**
   * Null when the guard lets `event` through; else why not, in words that name the fix.
   * With `event` null: null when some event of the transition's type would pass now (what
   * "enabled now" means for a guard that reads the payload).
   */
  refusal(context: SessionContext, event: UserEvent | null): string | null;
  /**
   * Whether the guard's refusal speaks to the session as it is (default: always). A state may
   * take an event on several edges; a refused event is told the words of the first guard that
   * applies (a fan-out's guards apply only while its items wait).
   */
  applies?(context: SessionContext): boolean;
}

/** Why a decision on a tool call is refused (null: it names a call that waits for one). */
function toolDecisionRefusal(context: SessionContext, event: UserEvent | null): string | null {
  const callId = event?.type === 'user_approved_tool_call' || event?.type === 'user_rejected_tool_call' ? event.callId : null;
  const pending = pendingToolCalls(context);
  if (callId === null ? pending.length > 0 : pending.some((c) => c.callId === callId)) return null;
  const waiting = pending.map((c) => `"${c.callId}" (${c.server}.${c.tool})`).join(', ') || 'none';
  const decided = callId === null ? undefined : context.reply.toolCalls?.find((c) => c.callId === callId);
  if (decided) return `Call "${callId}" was already decided (${decided.status}); calls still waiting: ${waiting}. Nothing was changed.`;
  return callId === null ? 'No tool call waits for a decision.' : `No call "${callId}" waits for a decision; calls waiting: ${waiting}. Nothing was changed.`;
}

/** Why answers to a server's question are refused (null: they answer each request of the call that asks, and only those). */
function toolInputRefusal(context: SessionContext, event: UserEvent | null): string | null {
  const asking = askingToolCall(context);
  if (!asking) return 'No tool call waits for input.';
  if (event?.type !== 'user_answered_tool_input') return null;
  if (event.callId !== asking.callId)
    return `No call "${event.callId}" waits for input; the call asking is "${asking.callId}" (${asking.server}.${asking.tool}). Nothing was changed.`;
  const keys = (asking.input?.requests ?? []).map((r) => r.key);
  const missing = keys.filter((k) => !Object.hasOwn(event.responses, k));
  const unknown = Object.keys(event.responses).filter((k) => !keys.includes(k));
  if (missing.length || unknown.length) {
    const said = [missing.length ? `unanswered: ${missing.join(', ')}` : '', unknown.length ? `not asked: ${unknown.join(', ')}` : ''].filter(Boolean);
    return `Answer each request of the call by its key (${keys.join(', ')}); ${said.join('; ')}. Nothing was changed.`;
  }
  for (const request of asking.input?.requests ?? []) {
    const answer = event.responses[request.key]!;
    if (request.mode === 'url' && answer.content !== undefined)
      return `Request "${request.key}" asks the person to visit a page: answer accept (done), decline or cancel, with no content.`;
    if (request.mode === 'form' && answer.action === 'accept' && answer.content === undefined)
      return `Request "${request.key}" is a form: an accept carries its content (or decline or cancel it).`;
  }
  return null;
}

/** Why a decision on an interrupted call is refused (null: it names the call that was cut off). */
function interruptedCallRefusal(context: SessionContext, event: UserEvent | null): string | null {
  const interrupted = interruptedToolCall(context);
  if (!interrupted) return 'No tool call was interrupted.';
  const callId = event && 'callId' in event ? event.callId : null;
  if (callId === null || callId === interrupted.callId) return null;
  return `No call "${callId}" was interrupted; the interrupted call is "${interrupted.callId}" (${interrupted.server}.${interrupted.tool}). Nothing was changed.`;
}

/** The artifact under review that the event names (any one under review when it names none). */
const pendingArtifact = (context: SessionContext, artifactId?: string | null) =>
  context.artifacts.find((a) => a.status === 'pending_review' && (artifactId == null || a.id === artifactId));

export function roleRefusal(context: SessionContext, workerId: string | undefined, roleId: string): string | null {
  const roles = context.package?.workers.find((w) => w.id === workerId)?.roles ?? [];
  if (roles.some((r) => r.id === roleId)) return null;
  const known = roles.map((r) => r.id).join(', ');
  return (
    `Role "${roleId}" is not a role of worker "${workerId ?? '?'}"; ` +
    `${known ? `its roles: ${known}` : 'it has no roles: leave edits.roleId out'}. Nothing was approved.`
  );
}

export const EVENT_GUARDS: Readonly<Record<EventGuardId, EventGuard>> = {
  packageIsKnown: {
    id: 'packageIsKnown',
    label: 'the package is in the catalog',
    doc: 'user_selected_package names a package of the catalog.',
    refusal(context, event) {
      const packageId = event?.type === 'user_selected_package' ? event.packageId : null;
      if (packageId === null ? context.catalog.length > 0 : context.catalog.some((p) => p.id === packageId)) return null;
      const known = context.catalog.map((p) => p.id).join(', ') || '(none)';
      return packageId === null ? `There are no packages to choose from. Packages: ${known}.` : `Unknown package "${packageId}". Packages: ${known}.`;
    },
  },
  hasRequest: {
    id: 'hasRequest',
    label: 'a request was made',
    doc: 'user_confirmed_intake needs a request on the blackboard.',
    refusal: (context) =>
      Object.hasOwn(context.blackboard, REQUEST_TAG) ? null : 'There is no request to confirm yet: send user_submitted_input with your request first.',
  },
  hasQuestionCard: {
    id: 'hasQuestionCard',
    label: 'a question card is shown',
    doc: 'Answering or skipping questions needs a question card.',
    refusal: (context) => (context.questions !== null ? null : 'There is no question card to answer: send user_submitted_input instead.'),
  },
  isArtifactUnderReview: {
    id: 'isArtifactUnderReview',
    label: 'the artifact is under review',
    doc: 'Accepting or rejecting names the artifact under review.',
    refusal(context, event) {
      const artifactId = event && 'artifactId' in event ? event.artifactId : null;
      if (pendingArtifact(context, artifactId)) return null;
      if (artifactId === null) return 'There is no artifact under review.';
      const pending = pendingArtifact(context);
      return `Artifact "${artifactId}" is not the one under review${pending ? `; the artifact under review is "${pending.id}"` : ''}.`;
    },
  },
  editedRoleIsWorkers: {
    id: 'editedRoleIsWorkers',
    label: "an edited role is one of the worker's",
    doc: "Approving with edits.roleId names one of the proposed worker's roles.",
    refusal(context, event) {
      const proposed = EVENT_GUARDS.isStepProposed.refusal(context, event);
      if (proposed !== null) return proposed;
      const roleId = event?.type === 'user_approved_next_step' ? event.edits?.roleId : undefined;
      return roleId === undefined ? null : roleRefusal(context, context.step?.workerId, roleId);
    },
  },
  isStepProposed: {
    id: 'isStepProposed',
    label: 'one step is proposed',
    doc: 'Deciding a single proposed step (not one of a fan-out, whose steps are decided by item).',
    refusal(context, event) {
      if (context.step === null) return 'No single step is proposed.';
      const item = event?.type === 'user_approved_next_step' || event?.type === 'user_rejected_next_step' ? event.item : undefined;
      return item === undefined
        ? null
        : `No step "${item}" waits: the one step proposed is run_worker(${context.step.workerId}), decided without an item. Nothing was changed.`;
    },
  },
  decidesTeamStep: {
    id: 'decidesTeamStep',
    label: 'a step of the fan-out is decided',
    doc: 'Approving or rejecting a step of a fan-out names one that waits (`item`: its run_worker call); the others still wait.',
    refusal: ofItems(teamStepRefusal, (c) => branchesIn(c, 'proposed').length, false),
    applies: (c) => branchesIn(c, 'proposed').length > 0,
  },
  decidesLastTeamStep: {
    id: 'decidesLastTeamStep',
    label: 'the last step of the fan-out is decided',
    doc: 'The decision is on the last step of the fan-out waiting: the approved workers then start together.',
    refusal: ofItems(teamStepRefusal, (c) => branchesIn(c, 'proposed').length, true),
    applies: (c) => branchesIn(c, 'proposed').length > 0,
  },
  decidesTeamArtifact: {
    id: 'decidesTeamArtifact',
    label: 'an artifact of the fan-out is decided',
    doc: 'Accepting or rejecting an artifact of a fan-out names one under review; the others still wait.',
    refusal: ofItems(teamArtifactRefusal, (c) => teamArtifactsUnderReview(c).length, false),
    applies: (c) => teamArtifactsUnderReview(c).length > 0,
  },
  decidesLastTeamArtifact: {
    id: 'decidesLastTeamArtifact',
    label: 'the last artifact of the fan-out is decided',
    doc: 'The decision is on the last artifact of the fan-out under review: the held workers go on, then the manager.',
    refusal: ofItems(teamArtifactRefusal, (c) => teamArtifactsUnderReview(c).length, true),
    applies: (c) => teamArtifactsUnderReview(c).length > 0,
  },
  editsWithinArtifactTags: {
    id: 'editsWithinArtifactTags',
    label: 'the artifact is under review; edits name only its tags',
    doc: 'Accepting names the artifact under review, and edits (tag → new body) name only tags of that artifact.',
    refusal(context, event) {
      const underReview = EVENT_GUARDS.isArtifactUnderReview.refusal(context, event);
      if (underReview !== null) return underReview;
      const edits = event?.type === 'user_accepted_artifact' ? event.edits : undefined;
      if (!edits) return null;
      const artifact = pendingArtifact(context, event?.type === 'user_accepted_artifact' ? event.artifactId : null)!;
      const outside = Object.keys(edits).filter((tag) => !Object.hasOwn(artifact.tags, tag));
      if (outside.length === 0) return null;
      const shown =
        outside
          .slice(0, 5)
          .map((t) => `"${t}"`)
          .join(', ') + (outside.length > 5 ? ` and ${outside.length - 5} more` : '');
      return `Edits name ${shown}, not a tag of artifact "${artifact.id}"; its tags: ${Object.keys(artifact.tags).join(', ')}. Nothing was accepted.`;
    },
  },
  decidesToolCall: {
    id: 'decidesToolCall',
    label: 'the call waits for a decision',
    doc: 'Approving or rejecting a tool call names a call of the wait that no one has decided yet (each call is decided on its own).',
    refusal: toolDecisionRefusal,
  },
  decidesLastToolCall: {
    id: 'decidesLastToolCall',
    label: 'the last call waiting is decided',
    doc: 'The decision is on the last undecided call of the wait: the approved calls then run, in the order the model gave them.',
    refusal(context, event) {
      const refused = toolDecisionRefusal(context, event);
      if (refused !== null) return refused;
      const others = pendingToolCalls(context).length - 1;
      return others > 0 ? `${others} other call(s) still wait for a decision.` : null;
    },
  },
  answersToolInput: {
    id: 'answersToolInput',
    label: 'answers what the server asked',
    doc: "The answers name the call whose server asked for input and answer each of its requests (a form's content is checked against the server's schema by the runtime).",
    refusal: toolInputRefusal,
  },
  settlesInterruptedCall: {
    id: 'settlesInterruptedCall',
    label: 'names the interrupted call',
    doc: 'Running again, skipping or giving the result of a call names the call a stopped process cut off.',
    refusal: interruptedCallRefusal,
  },
};

export const isEventGuardId = (name: string): name is EventGuardId => Object.hasOwn(EVENT_GUARDS, name);

/** The label for a named guard with its params, as the inspector and the diagrams show it. */
export function guardLabel(type: string, params: unknown): string | undefined {
  if (type === 'breaksRule' && params && typeof params === 'object') {
    const { actor, rule } = params as { actor?: string; rule?: string };
    const known = rule && Object.hasOwn(ruleById, rule) ? ruleById[rule as RuleId] : undefined;
    return known ? `${actor} breaks ${known.label}` : undefined;
  }
  if (type === 'burstUsedUp') return ruleById.burstWithinLimit.label;
  if (type === 'burstTokensWithinBudget') return ruleById.burstTokensWithinBudget.label;
  if (type === 'burstTokensUsedUp') return 'burst tokens over budget';
  if (isEventGuardId(type)) return EVENT_GUARDS[type].label;
  if (type === CLOSED_WAIT_GUARD) return 'names a wait that is not open';
  return undefined;
}
