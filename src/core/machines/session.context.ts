/**
 * The session's context: everything the statechart remembers besides its state value.
 * `phase` and `waitingReason` are not fields here — they are the state value.
 */
import type { Artifact, Question } from '../blackboard/artifacts.js';
import type { Blackboard, TagVersion } from '../blackboard/blackboard.js';
import type { ModelReply, TokenUsage } from '../models/model.js';
import type { QueuedCall } from '../tools/reply.js';
import type { WorkerInfo } from '../tools/validation.js';
import type { ApprovalPolicy } from '../skills/package-schema.js';
import type { PinnedTool, ToolCallItem, ToolCallVerdict, TurnTools } from '../tools/server-tools.js';
import type { Transcript, WindowLimits } from './transcript.js';
import type { WaitLedger } from './waits.js';
import type { DeadlinePolicy } from './deadlines.js';
import type { PlannedStep, Team } from './team.js';

export const DEFAULT_MAX_BURST = 12;
export const REJECTION_LOG_SIZE = 50;

export interface PackageInfo {
  id: string;
  title: string;
  description: string;
  workers: PackageWorker[];
  /**
   * The package version the session is pinned to: the sha256 of everything the runtime read
   * from the package folder (src/skills/package-version.ts), kept once per store. Absent in a
   * session saved before pinning until it is first resumed.
   */
  version?: string;
  /**
   * The MCP tools' definitions the session pinned, each when first offered to a worker: what
   * the model was shown and what an approval is bound to. A new package version (`steward
   * upgrade`) comes without them, so the next worker turn pins the tools as they are then.
   */
  pinnedTools?: PinnedTool[];
  /**
   * The session's values for its MCP servers' `${VAR}` (createSession's `toolVariables`, e.g. the
   * folder a filesystem server is confined to): over the runtime's environment, for this session
   * only. Kept with the session (so not for secrets) and through `steward upgrade`.
   */
  toolVariables?: Readonly<Record<string, string>>;
  /** Deadlines by waiting reason (the manifest's `deadlines` under `createRuntime({ deadlines })`): deadlines.ts. */
  deadlines?: DeadlinePolicy;
}

/**
 * A worker as the machine knows it: its registry entry, when not `model` its front matter's
 * approval policy, and the MCP tools it may call (`server.tool` or `server.*`).
 */
export type PackageWorker = WorkerInfo & {
  approval?: ApprovalPolicy;
  tools?: string[];
  /** The groups that decide its steps and tool calls (front matter `approvers`), and its artifacts (`reviewers`): deadlines.ts. */
  approvers?: string[];
  reviewers?: string[];
  /** Deadlines of the waits about it, over the package's (front matter `deadlines`). */
  deadlines?: DeadlinePolicy;
};

/** A worker run: proposed (waiting for approval) or under way. */
export interface Step {
  workerId: string;
  reason: string;
  roleId?: string;
  /** What the manager asked for (run_worker's requiresApproval). */
  requiresApproval: boolean;
  /**
   * The approval policy's answer for this step, fixed when it was proposed: the deployment's
   * `createRuntime({ approval })`, else the worker's front matter (approval.ts).
   */
  approval: ApprovalPolicy;
  /** The rejected artifact this run revises, with the user's notes. */
  revises?: string;
  revisionNotes?: string;
  /**
   * The step as the manager proposed it, when the user edited it before approving (reason
   * and roleId above are then the user's), and who edited it.
   */
  proposed?: { reason: string; roleId?: string; by?: string };
}

/** The boundary tool chosen in the latest reply, applied when its calls are all checked. */
export type Boundary =
  /** `item`: the call's id. `also`: the reply's other run_worker calls, independent of this one (a fan-out, team.ts). */
  | { tool: 'run_worker'; step: Step; item: string; also?: PlannedStep[] }
  | { tool: 'ask_user'; message?: string; assessment?: string; questions?: string[] }
  | { tool: 'review_blackboard'; message?: string }
  | { tool: 'finish'; summary?: string };

/** What a worker's latest reply chose: a submission, questions, or both. */
export interface WorkerChoice {
  outputs?: Record<string, string>;
  questions?: string[];
}

/** A model reply while its tool calls are checked, one per step (the turn's onDone, then `checking`). */
export interface ReplyUnderCheck {
  /** Tool calls still to be checked, in order. */
  queue: QueuedCall[];
  /** The manager's boundary tool chosen so far in this reply. */
  boundary: Boundary | null;
  /** The worker's submit / ask_user chosen so far in this reply. */
  workerChoice: WorkerChoice;
  /** Archived tag versions the turn fetched for this reply's read_blackboard calls. */
  attachments?: TurnAttachments;
  /** The deployment's approval policy for this reply's run_worker calls, from the turn's output. */
  approvals?: StepApproval[];
  /** When the reply arrived, from the turn's output when its actor stamps one: its artifact's time. */
  at?: string;
  /** The worker turn's verdicts on the reply's server-tool calls (policy, arguments), from its output. */
  verdicts?: ToolCallVerdict[];
  /** The reply's server-tool calls that passed the rules, in the model's order: decided, then run one by one. */
  toolCalls?: ToolCallItem[];
}

export const NO_REPLY: ReplyUnderCheck = { queue: [], boundary: null, workerChoice: {} };

/** The approval policy's answer for one run_worker call of a reply (by its call id, as the reply is queued). */
export interface StepApproval {
  callId: string;
  approval: ApprovalPolicy;
}

/** What a turn actor fetched from the archive for its reply (I/O stays in actors). */
export interface TurnAttachments {
  versions: { tag: string; version: TagVersion }[];
}

/** Both conversations, each a bounded window (src/core/machines/transcript.ts), and the window's limits. */
export interface Transcripts {
  /** The manager's conversation (its system prompt is assembled fresh each turn). */
  manager: Transcript;
  /** The current worker run's conversation (its brief is assembled fresh each turn). */
  worker: Transcript;
  window: WindowLimits;
}

/** The refusals the chart tells apart by a code of their own (Rejection.code). */
export type RefusalCode = 'wait_closed' | 'not_a_decider' | 'deadline_stale';

/** A refused user event, kept (bounded) so the inspector and the journal can show why. */
export interface Rejection {
  type: string;
  state: string;
  reason: string;
  /**
   * `wait_closed`: the event named a wait that is not open (waits.ts); `not_a_decider`: its
   * sender is in none of the groups the wait names (deadlines.ts); `deadline_stale`: a deadline
   * for a wait or a rule no longer current; absent: any other refusal (`event_refused`).
   */
  code?: RefusalCode;
  /** With `wait_closed`: the event repeats the decision that closed the wait it names. */
  repeated?: true;
  /** When the refused event was sent, from the event's `at` (stamped by the runtime). */
  at?: string;
}

/** Where a forked session came from: the original's id and the journal entry it starts after. */
export interface ForkOrigin {
  id: string;
  seq: number;
}

/**
 * Token bookkeeping — the session's usage, the burst's count and budget — and the session's
 * provenance, grouped in one field (the context's field count, see below). Tokens are the
 * model's reported usage (prompt + completion); a reply without usage counts 0. The model calls
 * of the session are counted here too (`rounds`).
 */
export interface Ledger {
  /** Tokens of all model calls of the session. */
  usage: TokenUsage;
  /** Tokens allowed per burst (between two hard user events); null: no budget. */
  maxBurstTokens: number | null;
  /** Tokens the model calls of this burst used. */
  burstTokens: number;
  /** Tokens of the latest model call: the estimate of the next one (a prompt only grows within a burst). */
  lastCallTokens: number;
  /** Model calls made in this session, all agents (every branch of a fan-out counts). */
  rounds: number;
  forkedFrom?: ForkOrigin;
}

export const NO_LEDGER: Ledger = { usage: { promptTokens: 0, completionTokens: 0 }, maxBurstTokens: null, burstTokens: 0, lastCallTokens: 0, rounds: 0 };

/**
 * Keep at most 19 top-level fields: XState's assign copies the context with Object.assign,
 * and V8 turns a larger copy into a slow dictionary-mode object (checked with
 * %HasFastProperties: 21 and 20 fields did; 19 do not). Group related fields instead: the
 * token counts, the usage, the model calls and the fork origin share `ledger` for this reason (19 fields now).
 */
export interface SessionContext {
  sessionId: string;
  /** The package's manifest as the machine needs it; null until one is chosen (legacy path). */
  package: PackageInfo | null;
  /** Packages the user may choose from in `skill_selection` (legacy path only: docs/design.md "Legacy paths"). */
  catalog: PackageInfo[];
  maxBurst: number;
  /** LLM rounds since the last hard user event; never above maxBurst. */
  burst: number;
  intakeConfirmed: boolean;
  /** The manager's and the worker's conversations, bounded windows of them. */
  transcripts: Transcripts;
  /** The latest model reply while its tool calls are checked. */
  reply: ReplyUnderCheck;
  step: Step | null;
  blackboard: Blackboard;
  artifacts: Artifact[];
  /** The question card (input), the worker's questions (worker_questions). */
  questions: Question[] | null;
  /** What the manager said to the user at its last boundary (ask_user, review_blackboard, finish). */
  message: string | null;
  assessment: string | null;
  /** A runtime notice: burst limit reached, model failure. */
  notice: string | null;
  rejections: Rejection[];
  /** Independent workers proposed together and run at once (team.ts); null while none is. */
  team: Team | null;
  /** Model calls and token usage (session and burst), the burst's token budget, and where a fork came from. */
  ledger: Ledger;
  /** The number of the wait opened last, and the decision that closed the latest answered one (waits.ts). */
  waits: WaitLedger;
}

export interface SessionInput {
  sessionId: string;
  package?: PackageInfo | null;
  catalog?: PackageInfo[];
  maxBurst?: number;
  /** Tokens allowed per burst (default: no budget). */
  maxBurstTokens?: number | null;
  /** Limits of the transcript windows (default DEFAULT_WINDOW). */
  window?: WindowLimits;
  /** Tags an app put on the blackboard before the session started (createSession's `blackboard`). */
  blackboard?: Blackboard;
}

/** What the managerTurn / workerTurn actors resolve with: the reply, and what they fetched for it. */
export type TurnOutput = ModelReply & {
  /**
   * When the reply arrived, if the actor says (the machine reads no clock): the time of the
   * tag versions it writes. Steward's own turns leave it out; the journal entry of the
   * actor's result has the time.
   */
  at?: string;
  /** Archived tag versions the turn fetched for the reply's read_blackboard calls (src/core/agents/turns.ts). */
  attachments?: TurnAttachments;
  /**
   * The deployment's approval policy for the reply's run_worker calls (`createRuntime({ approval })`,
   * asked by the manager's turn): the chart reads it instead of the worker's front matter.
   */
  approvals?: StepApproval[];
  /** A worker's turn: the server tools it pinned for the first time, and its verdict on each server-tool call of the reply. */
  tools?: TurnTools;
};
