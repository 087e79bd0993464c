/**
 * A fan-out: independent workers the manager proposed in one reply (the rule
 * `workersIndependent`, rules.ts), each an item a person decides on its own, then run at once.
 *
 * Each branch is one run_worker call, named by the call's id (`item`): decisions name it, and
 * so does the actor of its model round (`branch:<item>`, spawned by the chart). A branch's
 * reply is checked by the same worker rules as a single worker's: for the length of one
 * transient pass the chart *focuses* the branch (its step and conversation become the
 * session's), checks the reply, and parks the branch again with what it chose. The session's
 * own worker conversation is set aside meanwhile and put back, untouched.
 *
 * A branch finishes when it submits (its artifact waits for review), asks (its questions wait),
 * calls MCP tools (held: its calls are decided and run after the fan-in, alone), or stops (the
 * burst, the token budget, a failed model call: the manager is told). The fan-in reviews every
 * new artifact as an item of one wait, then takes the held branches one at a time, in the
 * order the manager proposed them (docs/design.md "Fan-out").
 */
import { toQuestions, type Question } from '../blackboard/artifacts.js';
import { stepNeedsApproval } from './approval.js';
import { NO_REPLY, type Boundary, type ReplyUnderCheck, type SessionContext, type Step } from './session.context.js';
import { EMPTY_TRANSCRIPT, type Transcript } from './transcript.js';
import * as update from './session.updates.js';
import { STEWARD } from './deadline-outcomes.js';
import { violationOf } from './rules.js';

type Update = Partial<SessionContext>;

export const BRANCH_STATUSES = ['proposed', 'approved', 'running', 'submitted', 'asked', 'held'] as const;
/**
 * proposed: waits for a person (approve_step); approved: decided, not yet started; running: its
 * model round is under way; submitted: its artifact waits for review; asked: its questions
 * wait; held: its MCP tool calls wait for the fan-in. A rejected or stopped branch leaves the team.
 */
export type BranchStatus = (typeof BRANCH_STATUSES)[number];

/** One worker of a fan-out. */
export interface Branch {
  /** The manager's run_worker call: the item a decision names. */
  item: string;
  step: Step;
  status: BranchStatus;
  /** Its own worker conversation. */
  transcript: Transcript;
  /** held: the reply whose tool calls wait. */
  reply?: ReplyUnderCheck;
  /** asked: the worker's questions. */
  questions?: Question[];
  /** submitted: the artifact under review. */
  artifactId?: string;
  /** running: the number of its model round under way (rounds of branches overlap, so each is numbered as it starts). */
  round?: number;
}

/** A run_worker call of a fan-out as its reply chose it. */
export interface PlannedStep {
  item: string;
  step: Step;
}

export interface Team {
  /** The manager's round that proposed it: with an item, it names a branch's conversation in the archive (a later fan-out may reuse a call id). */
  since: number;
  branches: Branch[];
  /** The branch whose reply the worker rules check now, and the session's worker conversation set aside meanwhile. */
  focus: { item: string; worker: Transcript } | null;
}

const ACTOR_PREFIX = 'branch:';

/**
 * The id of the actor that runs a branch's model round.
 *
 * @example
 * branchActorId('call_2'); // 'branch:call_2'
 */
export const branchActorId = (item: string): string => `${ACTOR_PREFIX}${item}`;

/** The item of a branch actor's id (undefined: not a branch's). */
export function itemOfActor(actorId: unknown): string | undefined {
  return typeof actorId === 'string' && actorId.startsWith(ACTOR_PREFIX) ? actorId.slice(ACTOR_PREFIX.length) : undefined;
}

/**
 * The branches of the session's fan-out in `status` (none without one).
 *
 * @example
 * branchesIn(context, 'proposed').map((b) => b.item); // the items still waiting for a decision
 */
export function branchesIn(context: SessionContext, status: BranchStatus): Branch[] {
  return context.team?.branches.filter((b) => b.status === status) ?? [];
}

export const branchOf = (context: SessionContext, item: string | undefined): Branch | undefined =>
  item === undefined ? undefined : context.team?.branches.find((b) => b.item === item);

/** The branch whose artifact is `artifactId` (one of a fan-in's, under review). */
export const branchOfArtifact = (context: SessionContext, artifactId: string): Branch | undefined =>
  context.team?.branches.find((b) => b.artifactId === artifactId);

/** The steps a manager reply chose to run (one, or a fan-out). */
export function plannedSteps(boundary: Boundary | null): PlannedStep[] {
  if (boundary?.tool !== 'run_worker') return [];
  return [{ item: boundary.item, step: boundary.step }, ...(boundary.also ?? [])];
}

/**
 * The context a branch's model round sees: the session's, with the branch's step and conversation.
 *
 * @example
 * enqueue.spawnChild('workerTurn', { id: branchActorId(b.item), input: branchContext(context, b) });
 */
export function branchContext(context: SessionContext, branch: Branch): SessionContext {
  return { ...context, step: branch.step, transcripts: { ...context.transcripts, worker: branch.transcript }, reply: branch.reply ?? NO_REPLY, team: null };
}

const withBranches = (context: SessionContext, change: (branches: Branch[]) => Branch[]): Update => {
  const branches = change(context.team?.branches ?? []);
  return { team: branches.length ? { since: context.team?.since ?? context.ledger.rounds, branches, focus: context.team?.focus ?? null } : null };
};

const replaced = (branches: Branch[], item: string, next: Branch | null): Branch[] =>
  next === null ? branches.filter((b) => b.item !== item) : branches.map((b) => (b.item === item ? next : b));

// ── the proposal and its items ───────────────────────────────────────────────

/** The fan-out the reply chose becomes the team: a branch per call, proposed where the approval policy says a person decides. */
export function proposeTeam(context: SessionContext): Update {
  const branches = plannedSteps(context.reply.boundary).map(({ item, step }): Branch => ({
    item,
    step,
    status: stepNeedsApproval(step) ? 'proposed' : 'approved',
    transcript: EMPTY_TRANSCRIPT,
  }));
  // Like a single worker's run, a fan-out means the request was understood: a later ask_user is no clarification.
  return { team: { since: context.ledger.rounds, branches, focus: null }, step: null, reply: NO_REPLY, intakeConfirmed: true };
}

/** The step of one item, approved (maybe edited: the manager is told, as for a single step). */
export function approveTeamStep(context: SessionContext, item: string, edits: { reason?: string; roleId?: string } | undefined, by?: string): Update {
  const branch = branchOf(context, item)!;
  const approved = update.approveStep({ ...context, step: branch.step }, edits, by);
  const step = approved.step ?? branch.step;
  return {
    ...withBranches(context, (list) => replaced(list, item, { ...branch, step, status: 'approved' })),
    ...(approved.transcripts ? { transcripts: approved.transcripts } : {}),
  };
}

/** The step of one item, rejected: it leaves the team, and the manager reads the rejection as that call's result. */
export function rejectTeamStep(context: SessionContext, item: string, reason: string | undefined, expiredAfter?: string): Update {
  const branch = branchOf(context, item)!;
  const told = update.tellManagerStepRejected({ ...context, step: branch.step }, reason, expiredAfter);
  return { ...withBranches(context, (list) => replaced(list, item, null)), transcripts: told.transcripts! };
}

/** The deadline of the items' wait passed: every item not yet decided is rejected. */
export function expireTeamSteps(context: SessionContext): Update {
  const after = context.waits.deadline?.after ?? 'the time allowed';
  let next = context;
  for (const branch of branchesIn(context, 'proposed')) next = { ...next, ...rejectTeamStep(next, branch.item, undefined, after) };
  return { team: next.team, transcripts: next.transcripts };
}

/**
 * The number the next round to start gets: after every round counted and every round under way
 * (a branch's reply may come back after a later one's).
 */
function nextRound(branches: readonly Branch[], context: SessionContext): number {
  return Math.max(context.ledger.rounds, ...branches.map((b) => (b.status === 'running' ? (b.round ?? 0) : 0))) + 1;
}

/** The rounds of a fan-out under way besides the branch whose reply is being checked: rule 6 counts them. */
export function roundsUnderWay(context: SessionContext): number {
  return branchesIn(context, 'running').filter((b) => b.item !== context.team?.focus?.item).length;
}

/**
 * The approved branches start together (the chart spawns their rounds), as far as the burst
 * and its token budget have room (rule 6 and the budget count the rounds under way): each is
 * running, its round numbered. One with no room left stops as a single worker does at the
 * limit (the manager is told, the session shows the notice).
 */
export function startBranches(context: SessionContext): Update {
  let next: SessionContext = context;
  for (const branch of branchesIn(context, 'approved')) {
    const overBurst = violationOf(next, 'worker', 'burstWithinLimit') !== null;
    const overBudget = !overBurst && violationOf(next, 'worker', 'burstTokensWithinBudget') !== null;
    if (!overBurst && !overBudget) {
      next = { ...next, ...withBranches(next, (list) => replaced(list, branch.item, { ...branch, status: 'running', round: nextRound(list, next) })) };
      continue;
    }
    const stopped = { ...next, step: branch.step };
    const { notice, transcripts } = overBurst ? update.noticeWorkerBurstLimit(stopped) : update.noticeWorkerTokenBudget(stopped);
    next = { ...next, notice: notice ?? null, transcripts: transcripts!, ...withBranches(next, (list) => replaced(list, branch.item, null)) };
  }
  return { team: next.team, notice: next.notice, transcripts: next.transcripts };
}

// ── a branch's reply, checked by the worker rules ─────────────────────────────

/** The branch whose round replied becomes the session's worker for one pass of the rules. */
export function focusBranch(context: SessionContext, item: string): Update {
  const branch = branchOf(context, item)!;
  return {
    step: branch.step,
    transcripts: { ...context.transcripts, worker: branch.transcript },
    team: { ...context.team!, focus: { item, worker: context.transcripts.worker } },
  };
}

/** The focused branch goes back to the team with what its reply chose (`next` null: it leaves the team). */
function park(context: SessionContext, next: ((branch: Branch) => Branch) | null): Update {
  const focus = context.team!.focus!;
  const branch: Branch = { ...branchOf(context, focus.item)!, step: context.step!, transcript: context.transcripts.worker };
  const branches = replaced(context.team!.branches, focus.item, next ? next(branch) : null);
  // A branch that leaves the team now leaves its conversation as the session's worker conversation,
  // numbered on from it, as a single worker's stays: the archive takes what this transition
  // appended from the context it leaves, and the branch is not in it any more.
  const worker = next ? focus.worker : { ...branch.transcript, total: focus.worker.total + branch.transcript.total };
  return {
    step: null,
    reply: NO_REPLY,
    transcripts: { ...context.transcripts, worker },
    team: branches.length ? { since: context.team!.since, branches, focus: null } : null,
  };
}

/** Its next round (the chart spawns it): nothing in the reply ended the branch. */
export const nextBranchRound = (context: SessionContext): Update =>
  park(context, (b) => ({ ...b, status: 'running', round: nextRound(context.team!.branches, context) }));

/** Its MCP tool calls wait for the fan-in: the reply is kept with them. */
export const holdBranch = (context: SessionContext): Update => {
  const reply = context.reply;
  return park(context, (b) => ({ ...b, status: 'held', reply }));
};

/** It submitted: the artifact is published (pending review) and waits for the fan-in. */
export function publishBranchArtifact(context: SessionContext): Update {
  const published = { ...context, ...update.publishArtifact(context) };
  const artifactId = published.artifacts.at(-1)!.id;
  // The artifact carries any questions that rode along; the session shows no card of its own for them.
  // Its conversation stays until the artifact is decided: the archive takes what a transition
  // appended from the context it leaves, so the transition that appends cannot also drop it.
  return { ...published, questions: null, ...park(published, (b) => ({ ...b, status: 'submitted', artifactId })) };
}

/** It asked: its questions wait for the fan-in. */
export function askBranch(context: SessionContext): Update {
  const questions = toQuestions(context.reply.workerChoice.questions!);
  return park(context, (b) => ({ ...b, status: 'asked', questions }));
}

/** It stopped (`stopped`: the notice and the manager's message of a single worker's stop): it leaves the team. */
export function stopBranch(context: SessionContext, stopped: Update): Update {
  const told = { ...context, ...stopped };
  return { ...stopped, ...park(told, null) };
}

// ── the fan-in ───────────────────────────────────────────────────────────────

/** The artifact of a branch was decided (accepted or rejected, by the update given): the branch leaves the team. */
export function settleTeamArtifact(context: SessionContext, artifactId: string, decided: Update): Update {
  const branch = branchOfArtifact(context, artifactId);
  const after = { ...context, ...decided };
  return { ...decided, step: null, questions: null, ...(branch ? withBranches(after, (list) => replaced(list, branch.item, null)) : {}) };
}

/** A rejected artifact of a fan-in: the manager reads the reason and decides what to do (no revision wait of its own). */
export function rejectTeamArtifact(context: SessionContext, artifactId: string, reason: string | undefined, by?: string, expiredAfter?: string): Update {
  const rejected = update.rejectArtifact({ ...context, step: context.step ?? branchOfArtifact(context, artifactId)?.step ?? null }, artifactId, reason);
  const workerId = context.artifacts.find((a) => a.id === artifactId)?.workerId ?? '?';
  const what = expiredAfter
    ? `Nobody decided on artifact ${artifactId} from ${workerId} within ${expiredAfter}, so it was rejected.`
    : `The user${by ? ` (${by})` : ''} rejected artifact ${artifactId} from ${workerId}${reason?.trim() ? `: ${reason.trim()}` : ' without giving a reason'}.`;
  const content = `${what} Run the worker again with what the user asked for, or plan another step.`;
  const told = update.tellManager(context, content);
  return settleTeamArtifact(context, artifactId, { artifacts: rejected.artifacts!, ...told });
}

/** The deadline of the fan-in's review passed: every artifact still under review is rejected (`reason`: the expiry's, as the artifact keeps it). */
export function expireTeamArtifacts(context: SessionContext, reason: string): Update {
  const after = context.waits.deadline?.after ?? 'the time allowed';
  let next = context;
  for (const branch of teamArtifactsUnderReview(context)) next = { ...next, ...rejectTeamArtifact(next, branch.artifactId!, reason, STEWARD, after) };
  return { artifacts: next.artifacts, team: next.team, transcripts: next.transcripts, step: null, questions: null };
}

/** The artifacts of the fan-in still under review. */
export const teamArtifactsUnderReview = (context: SessionContext): Branch[] => branchesIn(context, 'submitted');

/** The first held branch (asked, or with tool calls), in the order the manager proposed them. */
export const nextHeldBranch = (context: SessionContext): Branch | undefined => context.team?.branches.find((b) => b.status === 'asked' || b.status === 'held');

/**
 * The next held branch continues alone, as the session's worker: its questions wait, or its
 * tool calls go through the single worker's waits and runs.
 */
export function resumeHeldBranch(context: SessionContext): Update {
  const branch = nextHeldBranch(context)!;
  const rest = withBranches(context, (list) => replaced(list, branch.item, null));
  return {
    ...rest,
    step: branch.step,
    // Numbered on from the session's worker conversation, so that the archive keeps both apart.
    transcripts: { ...context.transcripts, worker: { ...branch.transcript, total: context.transcripts.worker.total + branch.transcript.total } },
    reply: branch.reply ?? NO_REPLY,
    questions: branch.questions ?? null,
  };
}

/** Whether the held branch asked (else its tool calls wait). */
export const heldBranchAsked = (context: SessionContext): boolean => nextHeldBranch(context)?.status === 'asked';
