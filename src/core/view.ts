/**
 * The view of a session: what a UI, the CLI or a test needs to know, derived from the
 * snapshot. phase = top-level state; waitingReason = the `waiting_user` substate.
 */
import { latest, versionOf } from './blackboard/blackboard.js';
import type { Question } from './blackboard/artifacts.js';
import { approvalRequiredBy, type ApprovalRequiredBy } from './machines/approval.js';
import { readSnapshot } from './machines/refusals.js';
import type { ForkOrigin, Rejection, SessionContext, Step } from './machines/session.context.js';
import type { UserEventType } from './machines/session.events.js';
import type { DeadlineOutcome } from './machines/deadlines.js';
import type { WaitingReason } from './machines/stream-events.js';
import type { TokenUsage } from './models/model.js';
import type { SessionSnapshot } from './machines/session-snapshot.js';
import { teamArtifactsUnderReview, type Branch, type BranchStatus } from './machines/team.js';
import { isToolWait, pinnedTool, type ToolAnnotations, type ToolCallItem } from './tools/server-tools.js';

export type Phase = 'waiting_user' | 'running' | 'done';

export interface ArtifactView {
  id: string;
  workerId: string;
  roleId?: string;
  status: string;
  revises?: string;
  /** writtenBy: the worker, or who edited the tag while accepting (the worker's version stays on the blackboard). */
  tags: { tag: string; version: number; body: string; writtenBy: string }[];
  questions?: Question[];
}

/**
 * The open wait's deadline as people see it: the rule of its chain that is current (its
 * place `level`, its interval `after`, what happens when it passes, and for an escalation the
 * group `to`), and when it is due. The chart knows no clock: `dueAt` is what the runtime that
 * holds the session computed (ISO-8601), null when the view was read without it.
 */
/**
 * A worker of a fan-out (several independent workers proposed in one reply, run at once): the
 * item a decision names (`item`, its run_worker call; in a review, the artifact's id), and
 * where it is (team.ts: proposed, approved, running, submitted, asked, held).
 */
export interface TeamItemView {
  item: string;
  workerId: string;
  reason: string;
  roleId?: string;
  status: BranchStatus;
  /** proposed: why it waits for a person. */
  approvalRequiredBy?: ApprovalRequiredBy;
  /** submitted: its artifact, under review. */
  artifact?: ArtifactView;
  /** asked: its questions, answered after the fan-in's review. */
  questions?: Question[];
}

export interface DeadlineView {
  level: number;
  outcome: DeadlineOutcome;
  after: string;
  to: string | null;
  dueAt: string | null;
}

/** What a view is read with besides the snapshot: what only the runtime knows. */
export interface ViewExtras {
  /** When the open wait's current deadline rule is due (ISO-8601), as the runtime computed it. */
  dueAt?: string | null;
}

export interface SessionView {
  id: string;
  packageId: string | null;
  /** Full dotted state, e.g. "waiting_user.review_artifact" or "running.manager.thinking". */
  state: string;
  phase: Phase;
  waitingReason?: WaitingReason;
  /**
   * The open wait's number (while the session waits): a decision names it as `wait` so that it
   * is never applied to a later wait (`wait_closed`). AG-UI interrupt ids and A2A statuses carry it.
   */
  wait?: number;
  burst: number;
  maxBurst: number;
  /** The proposed step (approve_step) or the step a worker runs or revises. */
  pendingStep?: Step;
  /**
   * In approve_step: why the step waits. `policy`: the deployment's rule (the worker's
   * front matter `approval: always`, `createRuntime({ approval })`, or a swapped guard);
   * `model`: the manager asked for approval and the policy left it to the manager.
   */
  approvalRequiredBy?: ApprovalRequiredBy;
  /** The artifact under review (review_artifact, revision); in a fan-in, the first of those under review. */
  artifact?: ArtifactView;
  /** While a fan-out is under way: its workers, each an item decided on its own. */
  team?: TeamItemView[];
  /**
   * The worker's MCP tool calls of its latest reply, while they are decided or run: each with
   * its server, tool, arguments, status and the tool's pinned description (approve_tool shows
   * them; a call whose tool changed since its approval shows what it was and is; tool_input
   * shows what the server asks, in `input`; tool_interrupted, the call that was cut off).
   */
  toolCalls?: ToolCallView[];
  questions?: Question[];
  message?: string;
  assessment?: string;
  notice?: string;
  blackboard: { tag: string; version: number; writtenBy: string }[];
  artifacts: { id: string; workerId: string; status: string }[];
  /** User events the current state declares (guards may still refuse one). */
  acceptedEvents: UserEventType[];
  /** The accepted events the guards allow now: what a UI should offer (`session.enabledEvents()`). */
  enabledEvents: UserEventType[];
  rejections: Rejection[];
  usage: TokenUsage;
  rounds: number;
  /** Tokens: used in this burst, in the whole session, and the per-burst budget (null: none). */
  tokens: { burst: number; session: number; maxBurst: number | null };
  /** The session this one was forked from, and the journal entry it starts after. */
  forkedFrom?: ForkOrigin;
  /**
   * The package version the session runs (sha256 of its manifest and prompts, kept in the
   * store); null without a package, or for a session saved before pinning that was not resumed since.
   */
  packageVersion: string | null;
  /** The version of the package on disk, when it differs from the pinned one: `steward upgrade` moves the session to it. */
  packageOnDisk?: string;
  /** The open wait's deadline (deadlines.ts): null when the session does not wait or the wait has none. */
  deadline: DeadlineView | null;
  /** The groups that may decide the open wait (and `admin`); null: anyone who may decide the session, or no wait. */
  deciders: string[] | null;
}

/** The session's accepted artifacts, as views, in the order they were submitted: what it delivered. */
export function acceptedArtifacts(context: SessionContext): ArtifactView[] {
  return context.artifacts.filter((a) => a.status === 'accepted').flatMap((a) => artifactView(context, a.id) ?? []);
}

export function artifactView(context: SessionContext, id: string): ArtifactView | undefined {
  const a = context.artifacts.find((x) => x.id === id);
  if (!a) return undefined;
  return {
    id: a.id,
    workerId: a.workerId,
    status: a.status,
    ...(a.roleId ? { roleId: a.roleId } : {}),
    ...(a.revises ? { revises: a.revises } : {}),
    tags: Object.entries(a.tags).map(([tag, version]) => {
      const v = versionOf(context.blackboard, tag, version);
      return { tag, version, body: v?.body ?? '', writtenBy: v?.writtenBy ?? a.workerId };
    }),
    ...(a.questions ? { questions: a.questions } : {}),
  };
}

/**
 * What a UI, the CLI or a test needs to know of a session, derived from its snapshot.
 *
 * @example
 * const view = sessionView(actor.getSnapshot(), (id) => versions.get(id), { dueAt: '2026-01-02T09:00:00.000Z' }); // the hash of a package on disk; the deadline's due time
 * if (view.waitingReason === 'review_artifact') showArtifact(view.artifact!);
 */
export function sessionView(snapshot: SessionSnapshot, packageOnDisk?: (packageId: string) => string | undefined, extras: ViewExtras = {}): SessionView {
  const { context } = snapshot;
  const { ledger } = context;
  const pinned = context.package?.version ?? null;
  const onDisk = context.package && packageOnDisk ? packageOnDisk(context.package.id) : undefined;
  // One reading of the chart gives the state, what it accepts and what is enabled now.
  const { state, accepted, enabled } = readSnapshot(snapshot);
  const dot = state.indexOf('.');
  const phase = (dot < 0 ? state : state.slice(0, dot)) as Phase;
  const view: SessionView = {
    id: context.sessionId,
    packageId: context.package?.id ?? null,
    state,
    phase,
    burst: context.burst,
    maxBurst: context.maxBurst,
    blackboard: boardSummary(context.blackboard),
    artifacts: context.artifacts.map((a) => ({ id: a.id, workerId: a.workerId, status: a.status })),
    acceptedEvents: accepted,
    enabledEvents: enabled,
    rejections: context.rejections,
    usage: ledger.usage,
    rounds: context.ledger.rounds,
    tokens: { burst: ledger.burstTokens, session: ledger.usage.promptTokens + ledger.usage.completionTokens, maxBurst: ledger.maxBurstTokens },
    packageVersion: pinned,
    deadline: null,
    deciders: null,
  };
  // The optional fields, set only when there is something to show (absent rather than undefined).
  if (phase === 'waiting_user') {
    const waitingReason = state.slice(dot + 1) as WaitingReason;
    view.waitingReason = waitingReason;
    view.wait = context.waits.opened;
    view.deadline = deadlineView(context.waits.deadline, extras.dueAt ?? null);
    view.deciders = context.waits.deciders ? [...context.waits.deciders] : null;
    if (waitingReason === 'review_artifact' || waitingReason === 'revision') {
      const fanIn = teamArtifactsUnderReview(context)[0]?.artifactId;
      const underReview = fanIn ?? context.artifacts.findLast((a) => a.status === 'pending_review' || a.status === 'rejected')?.id;
      if (underReview) view.artifact = artifactView(context, underReview);
    }
  }
  if (context.team) view.team = context.team.branches.map((b) => teamItemView(context, b));
  if (context.step) view.pendingStep = context.step;
  if (context.reply.toolCalls?.length && (phase === 'running' || isToolWait(view.waitingReason))) view.toolCalls = toolCallViews(context);
  if (view.waitingReason === 'approve_step' && context.step) view.approvalRequiredBy = approvalRequiredBy(context.step);
  if (context.questions) view.questions = context.questions;
  if (context.message) view.message = context.message;
  if (context.assessment) view.assessment = context.assessment;
  if (context.notice) view.notice = context.notice;
  if (ledger.forkedFrom) view.forkedFrom = ledger.forkedFrom;
  if (onDisk !== undefined && onDisk !== pinned) view.packageOnDisk = onDisk;
  return view;
}

function teamItemView(context: SessionContext, branch: Branch): TeamItemView {
  const { step } = branch;
  const artifact = branch.status === 'submitted' && branch.artifactId ? artifactView(context, branch.artifactId) : undefined;
  return {
    item: branch.item,
    workerId: step.workerId,
    reason: step.reason,
    ...(step.roleId ? { roleId: step.roleId } : {}),
    status: branch.status,
    ...(branch.status === 'proposed' ? { approvalRequiredBy: approvalRequiredBy(step) } : {}),
    ...(artifact ? { artifact } : {}),
    ...(branch.status === 'asked' && branch.questions ? { questions: branch.questions } : {}),
  };
}

/** The open wait's current rule as the view shows it (the chart's `waits.deadline`, with the runtime's due time). */
function deadlineView(rule: SessionContext['waits']['deadline'], dueAt: string | null): DeadlineView | null {
  return rule ? { level: rule.level, outcome: rule.outcome, after: rule.after, to: rule.to ?? null, dueAt } : null;
}

/** A server-tool call as a person decides it: the call, and the tool as pinned (its description, schema and hints). */
export type ToolCallView = ToolCallItem & { description?: string; inputSchema?: Record<string, unknown>; annotations?: ToolAnnotations };

function toolCallViews(context: SessionContext): ToolCallView[] {
  return (context.reply.toolCalls ?? []).map((item) => {
    const pinned = pinnedTool(context.package?.pinnedTools, item.server, item.tool);
    return {
      ...item,
      ...(pinned?.description !== undefined ? { description: pinned.description } : {}),
      ...(pinned ? { inputSchema: pinned.inputSchema } : {}),
      ...(pinned?.annotations ? { annotations: pinned.annotations } : {}),
    };
  });
}

/** Each tag's latest version: the view's blackboard list. */
function boardSummary(board: SessionContext['blackboard']): SessionView['blackboard'] {
  const out: SessionView['blackboard'] = [];
  for (const tag of Object.keys(board)) {
    const v = latest(board, tag)!;
    out.push({ tag, version: v.version, writtenBy: v.writtenBy });
  }
  return out;
}
