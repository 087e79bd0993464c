/**
 * The context updates behind the machine's named actions: pure functions from the context
 * (and event data) to the fields that change. The machine file wires them by name; keeping
 * them here keeps that file a readable table of contents.
 */
import { Immer } from 'immer';
import { moveArtifact, nextArtifactId, toQuestions } from '../blackboard/artifacts.js';
import { REQUEST_TAG, retainBodies, withVersion, type Blackboard } from '../blackboard/blackboard.js';
import { clip, DEFAULT_LIMITS } from '../limits.js';
import { InternalError } from '../errors.js';
import type { ChatMessage } from '../models/model.js';
import { redactSecrets } from '../models/redact.js';
import { runLoopTool } from '../tools/loop-tools.js';
import { normalizeReply, toolCallIds, type QueuedCall } from '../tools/reply.js';
import {
  findTool,
  SubmitArgs,
  type FinishArgs,
  type ManagerAskUserArgs,
  type ReviewBlackboardArgs,
  type RunWorkerArgs,
  type ToolActor,
  type WorkerAskUserArgs,
} from '../tools/schemas.js';
import { burstLimitNotice } from '../tools/validation.js';
import type { z } from 'zod';
import type { Boundary, Rejection, SessionContext, Step, TurnOutput } from './session.context.js';
import { NO_REPLY, REJECTION_LOG_SIZE } from './session.context.js';
import { burstTokensNotice } from './rules.js';
import { runWorkerResult, stepNeedsApproval } from './approval.js';
import { ownValue } from '../blackboard/keyed.js';
import { appendToTranscript, resetTranscript } from './transcript.js';
import { acceptTurnTools, settleServerCall, verdictOf } from './tool-calls.js';

type Update = Partial<SessionContext>;

// Immer for the artifacts' nested edits, through our own instance: no auto-freeze (a snapshot
// restored from JSON is never frozen, and deep-freezing it on every edit cost more than the
// edit), and the host app's global immer settings stay untouched.
const { produce } = new Immer({ autoFreeze: false });

// No clock here: these are the machine's actions, pure functions of context and event. A time
// the context keeps comes with the event (`at`, stamped by the runtime), or is left out.
const stamp = (at: string | undefined) => (at === undefined ? {} : { at });

/** Appends to an actor's transcript window (which cuts its oldest groups when over its limits). */
function append(ctx: SessionContext, actor: ToolActor, ...messages: ChatMessage[]): Update {
  const t = ctx.transcripts;
  const next = appendToTranscript(t[actor], t.window, messages);
  return { transcripts: actor === 'manager' ? { manager: next, worker: t.worker, window: t.window } : { manager: t.manager, worker: next, window: t.window } };
}

/** A worker run (or a revision) starts a new worker conversation. */
export function startWorkerConversation(ctx: SessionContext): Update {
  const t = ctx.transcripts;
  const worker = resetTranscript(t.worker);
  return worker === t.worker ? {} : { transcripts: { ...t, worker } };
}

function toolResult(call: QueuedCall, content: string): ChatMessage {
  return { role: 'tool', tool_call_id: call.call.id, content };
}

function head(ctx: SessionContext): QueuedCall {
  const call = ctx.reply.queue[0];
  if (!call) throw new InternalError('A call was refused on an empty queue: the refusing guard let an empty queue through.');
  return call;
}

function formatAnswers(questions: SessionContext['questions'], answers: Record<string, string>): string {
  return (questions ?? []).map((q) => `- ${q.text}\n  → ${answers[q.id]?.trim() || '(no answer)'}`).join('\n');
}

// ── hard user events ─────────────────────────────────────────────────────

/** A hard user event starts a new burst: its rounds and its tokens count from 0 again. */
export function resetBurst(ctx: SessionContext): Update {
  const ledger = ctx.ledger;
  return { burst: 0, notice: null, ledger: { ...ledger, burstTokens: 0, lastCallTokens: 0 } };
}

export function recordRequest(ctx: SessionContext, text: string, at?: string, by?: string): Update {
  // A reply to a clarification adds a part to the request; readers get every part
  // (requestText), so each version holds only what is new and storage stays linear.
  const { board } = withVersion(ctx.blackboard, REQUEST_TAG, { body: text, writtenBy: by ?? 'user', ...stamp(at) });
  const blackboard = retainBodies(board, ctx.artifacts);
  // The reply answers any clarification shown in intake: its card and message are spent.
  return { blackboard, questions: null, message: null, assessment: null, ...append(ctx, 'manager', { role: 'user', content: text }) };
}

export function confirmIntake(ctx: SessionContext): Update {
  const content = 'The user confirmed the request as it stands: plan the work.';
  return { intakeConfirmed: true, questions: null, message: null, assessment: null, ...append(ctx, 'manager', { role: 'user', content }) };
}

export function recordUserInput(ctx: SessionContext, text: string, at?: string, by?: string): Update {
  // Before the intake is confirmed (e.g. after a failure during intake) input still adds to the request.
  if (!ctx.intakeConfirmed) return recordRequest(ctx, text, at, by);
  return { questions: null, message: null, assessment: null, ...append(ctx, 'manager', { role: 'user', content: text }) };
}

export function recordRequestAnswers(ctx: SessionContext, answers: Record<string, string>, at?: string, by?: string): Update {
  return recordRequest(ctx, `Answers to the clarifying questions:\n${formatAnswers(ctx.questions, answers)}`, at, by);
}

export function recordAnswers(ctx: SessionContext, actor: ToolActor, answers: Record<string, string> | null): Update {
  const content = answers
    ? `The user answered your questions:\n${formatAnswers(ctx.questions, answers)}`
    : 'The user skipped your questions: go on with your best judgement.';
  return { questions: null, message: null, assessment: null, ...append(ctx, actor, { role: 'user', content }) };
}

export function tellManagerStepRejected(ctx: SessionContext, reason: string | undefined, expiredAfter?: string): Update {
  const step = ctx.step!;
  const content = expiredAfter
    ? `Nobody decided on the proposed step run_worker(${step.workerId}) within ${expiredAfter}, so it was rejected: it did not run.`
    : `The user rejected the proposed step run_worker(${step.workerId})${reason ? `: ${reason}` : ' without giving a reason.'}`;
  return { step: null, ...append(ctx, 'manager', { role: 'user', content }) };
}

/**
 * Approving the proposed step, possibly edited: the worker runs with the user's reason and
 * role. The manager's own run_worker call and its tool result ("Proposed to the user; you will
 * hear whether they approved it.") stay as they were; what the user approved follows as the
 * next user message, so the model sees both its call and what ran. (Appended, not rewritten:
 * the archive keeps what each event added, and a transcript is only ever appended to.)
 */
export function approveStep(ctx: SessionContext, edits: { reason?: string; roleId?: string } | undefined, by?: string): Update {
  const step = ctx.step!;
  if (!edits) return {};
  const edited: Step = {
    ...step,
    reason: edits.reason ?? step.reason,
    ...(edits.roleId !== undefined ? { roleId: edits.roleId } : {}),
    proposed: { reason: step.reason, ...(step.roleId !== undefined ? { roleId: step.roleId } : {}), ...(by !== undefined ? { by } : {}) },
  };
  const changes = [
    ...(edits.reason !== undefined ? [`reason "${edits.reason}" (you proposed "${step.reason}")`] : []),
    ...(edits.roleId !== undefined ? [`role "${edits.roleId}" (you proposed ${step.roleId ? `"${step.roleId}"` : 'no role'})`] : []),
  ];
  const content =
    `The user${by ? ` (${by})` : ''} approved your run_worker(${step.workerId}) with edits: ` +
    `${changes.join('; ')}. The worker runs with the edited step; you will hear when the user has ` +
    `reviewed its artifact.`;
  return { step: edited, ...append(ctx, 'manager', { role: 'user', content }) };
}

/**
 * Accepting the artifact under review, possibly with the user's own bodies for some of its
 * tags: each becomes a new version written by the user (the worker's stays readable), the
 * artifact points at it, and the manager is told which tags the user changed.
 */
export function acceptArtifact(ctx: SessionContext, artifactId: string, edits?: Record<string, string>, at?: string, by?: string): Update {
  const accepted = ctx.artifacts.find((x) => x.id === artifactId)!;
  let blackboard = ctx.blackboard;
  const changed: [string, number][] = [];
  for (const [tag, body] of Object.entries(edits ?? {})) {
    const next = withVersion(blackboard, tag, { body, writtenBy: by ?? 'user', artifactId, ...stamp(at) });
    blackboard = next.board;
    changed.push([tag, next.version.version]);
  }
  // fromEntries / spread define own keys, "__proto__" included.
  const tagsNow: Record<string, number> = { ...accepted.tags, ...Object.fromEntries(changed) };
  const artifacts = produce(ctx.artifacts, (list) => {
    const a = list.find((x) => x.id === artifactId)!;
    moveArtifact(a, 'accepted');
    if (changed.length) a.tags = tagsNow;
    delete a.questions; // Accept dismisses the questions that rode along
  });
  const tags = Object.entries(tagsNow)
    .map(([t, v]) => `${t} v${v}`)
    .join(', ');
  const edited = changed.map(([t, v]) => `${t} (now v${v}, written by ${by ?? 'user'}; the worker's v${ownValue(accepted.tags, t)} stays readable)`).join(', ');
  const editNote = changed.length
    ? ` The user${by ? ` (${by})` : ''} edited ${edited}: read the new ` +
      `version${changed.length > 1 ? 's' : ''} before building on ${changed.length > 1 ? 'them' : 'it'}.`
    : '';
  const content = `The user accepted artifact ${artifactId} from ${accepted.workerId} (${tags}).${editNote} Plan the next step.`;
  return { artifacts, blackboard: retainBodies(blackboard, artifacts), step: null, questions: null, ...append(ctx, 'manager', { role: 'user', content }) };
}

export function rejectArtifact(ctx: SessionContext, artifactId: string, reason: string | undefined): Update {
  const artifacts = produce(ctx.artifacts, (list) => {
    const a = list.find((x) => x.id === artifactId)!;
    moveArtifact(a, 'rejected');
  });
  const step: Step = { ...ctx.step!, revises: artifactId, revisionNotes: reason?.trim() || undefined };
  return { artifacts, step, questions: null };
}

export function startRevision(ctx: SessionContext, notes: string): Update {
  const previous = ctx.step!.revisionNotes;
  return { step: { ...ctx.step!, revisionNotes: previous ? `${previous}\n${notes}` : notes }, ...startWorkerConversation(ctx) };
}

// ── model replies and their tool calls ────────────────────────────────────────

/**
 * A reply as the chart queues its calls: ids already used in the window (what the model is
 * sent) renamed. The manager's turn reads the same queue to ask the approval policy about its
 * run_worker calls by id.
 */
export function queuedReply(ctx: SessionContext, actor: ToolActor, reply: TurnOutput) {
  return normalizeReply(actor, reply, `fallback_${ctx.ledger.rounds + 1}`, toolCallIds(ctx.transcripts[actor].messages));
}

export function acceptReply(ctx: SessionContext, actor: ToolActor, reply: TurnOutput): Update {
  const { message, queue } = queuedReply(ctx, actor, reply);
  const ledger = ctx.ledger;
  // Counted as whole, non-negative numbers: a model (or its SDK) may report garbage.
  const usage = reply?.usage
    ? {
        promptTokens: ledger.usage.promptTokens + count(reply.usage.promptTokens),
        completionTokens: ledger.usage.completionTokens + count(reply.usage.completionTokens),
      }
    : ledger.usage;
  const callTokens = tokensOf(reply?.usage);
  const nudge: ChatMessage[] =
    queue.length === 0
      ? [
          {
            role: 'user',
            content:
              actor === 'worker'
                ? 'Reply by calling submit with your outputs, or ask_user if you cannot go on without answers.'
                : 'Reply by calling one of your tools.',
          },
        ]
      : [];
  const { verdicts, ...pinned } = actor === 'worker' ? acceptTurnTools(ctx, reply?.tools) : {};
  return {
    burst: ctx.burst + 1,
    ledger: { ...ledger, usage, burstTokens: ledger.burstTokens + callTokens, lastCallTokens: callTokens, rounds: ledger.rounds + 1 },
    reply: {
      queue,
      boundary: null,
      workerChoice: {},
      ...stamp(reply?.at),
      ...(reply?.attachments?.versions.length ? { attachments: reply.attachments } : {}),
      ...(Array.isArray(reply?.approvals) && reply.approvals.length ? { approvals: reply.approvals } : {}),
      ...(verdicts ? { verdicts } : {}),
    },
    ...pinned,
    ...append(ctx, actor, message, ...nudge),
  };
}

/** A call's tokens (prompt + completion); a missing or malformed usage counts 0. */
function tokensOf(usage: { promptTokens?: unknown; completionTokens?: unknown } | undefined): number {
  return usage ? count(usage.promptTokens) + count(usage.completionTokens) : 0;
}

const count = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0);

/** The tool result of a refused head call: the rule's message, bounded (a list of 10,000 tags must not flood the next prompt). */
export function refusalResult(ctx: SessionContext, reason: string): ChatMessage {
  return toolResult(head(ctx), `Error: ${clip(reason, DEFAULT_LIMITS.refusalMessageChars)}`);
}

export function refuseCall(ctx: SessionContext, actor: ToolActor, result: ChatMessage): Update {
  return { reply: { ...ctx.reply, queue: ctx.reply.queue.slice(1) }, ...append(ctx, actor, result) };
}

function runLoopCall(ctx: SessionContext, call: QueuedCall): Update {
  const result = runLoopTool(call.call.function.name, call.args, {
    blackboard: ctx.blackboard,
    workers: ctx.package?.workers ?? [],
    artifacts: ctx.artifacts,
    ...(ctx.reply.attachments ? { attachments: ctx.reply.attachments.versions } : {}),
  });
  return { reply: { ...ctx.reply, queue: ctx.reply.queue.slice(1) }, ...append(ctx, 'manager', toolResult(call, result)) };
}

/** The arguments as the tool's schema parsed them: zod's own copy (what is written is what was validated). */
function parsedArgs<S extends z.ZodType>(schema: S, call: QueuedCall): z.infer<S> {
  const parsed = schema.safeParse(call.args);
  if (!parsed.success) throw new InternalError(`${call.call.function.name} reached its settlement with arguments rule 2 refuses.`);
  return parsed.data;
}

/**
 * The approval policy's answer for a run_worker call: the deployment's (the turn asked it),
 * else the worker's front matter, else `model`.
 */
function approvalFor(ctx: SessionContext, callId: string, workerId: string): Step['approval'] {
  const asked = ctx.reply.approvals?.find((a) => a.callId === callId)?.approval;
  return asked ?? ctx.package?.workers.find((w) => w.id === workerId)?.approval ?? 'model';
}

/**
 * The boundary a manager's boundary-tool call chooses; any other name is a bug, not a finish.
 * Reached only after rule 2 passed the call, so its arguments have the schema's zod-inferred
 * type (settling the call does not parse them again).
 */
export function boundaryOf(ctx: SessionContext, call: QueuedCall): Boundary {
  const name = call.call.function.name;
  switch (name) {
    case 'run_worker': {
      const { workerId, reason, requiresApproval, roleId } = call.args as RunWorkerArgs;
      const approval = approvalFor(ctx, call.call.id, workerId);
      return { tool: 'run_worker', item: call.call.id, step: { workerId, reason, requiresApproval, approval, ...(roleId ? { roleId } : {}) } };
    }
    case 'ask_user':
      return { tool: 'ask_user', ...(call.args as ManagerAskUserArgs) };
    case 'review_blackboard':
      return { tool: 'review_blackboard', ...(call.args as ReviewBlackboardArgs) };
    case 'finish':
      return { tool: 'finish', ...(call.args as FinishArgs) };
    default:
      throw new InternalError(`"${name}" is not a manager boundary tool: only boundary tools are settled as boundaries.`);
  }
}

const boundaryResult: Record<Boundary['tool'], (b: Boundary) => string> = {
  run_worker: (b) => {
    const { step } = b as Extract<Boundary, { tool: 'run_worker' }>;
    return runWorkerResult(step, stepNeedsApproval(step));
  },
  ask_user: () => 'Shown to the user; their reply follows.',
  review_blackboard: () => 'The overview is shown to the user; their reply follows.',
  finish: () => 'The session is finished.',
};

/** Settles the head call of a manager reply: a loop tool runs, a boundary tool becomes the choice. */
export function settleCall(ctx: SessionContext): Update {
  const call = ctx.reply.queue[0];
  if (!call) return {};
  return findTool('manager', call.call.function.name)?.kind === 'loop' ? runLoopCall(ctx, call) : chooseBoundary(ctx, call);
}

/** Settles the head call of a worker reply: submit or ask_user, or a call of an MCP tool (an item a person or the policy decides). */
export function settleWorkerCall(ctx: SessionContext): Update {
  const call = ctx.reply.queue[0];
  if (!call) return {};
  const verdict = verdictOf(ctx, call);
  return verdict ? settleServerCall(ctx, call, verdict) : chooseWorkerCall(ctx, call);
}

function chooseBoundary(ctx: SessionContext, call: QueuedCall): Update {
  const chosen = boundaryOf(ctx, call);
  const before = ctx.reply.boundary;
  // A second run_worker that passed workersIndependent joins the first: a fan-out (team.ts).
  const boundary =
    before?.tool === 'run_worker' && chosen.tool === 'run_worker'
      ? { ...before, also: [...(before.also ?? []), { item: chosen.item, step: chosen.step }] }
      : chosen;
  return {
    reply: { ...ctx.reply, queue: ctx.reply.queue.slice(1), boundary },
    ...append(ctx, 'manager', toolResult(call, boundaryResult[chosen.tool](chosen))),
  };
}

function chooseWorkerCall(ctx: SessionContext, call: QueuedCall): Update {
  const isSubmit = call.call.function.name === 'submit';
  // What zod parsed, not the raw arguments: what is written is what was validated.
  const workerChoice = isSubmit
    ? { ...ctx.reply.workerChoice, outputs: parsedArgs(SubmitArgs, call).outputs }
    : { ...ctx.reply.workerChoice, questions: (call.args as WorkerAskUserArgs).questions };
  const result = isSubmit
    ? `Submitted as artifact ${nextArtifactId(ctx.artifacts)}; the user reviews it.`
    : 'Your questions are shown to the user; their answers follow.';
  return { reply: { ...ctx.reply, queue: ctx.reply.queue.slice(1), workerChoice }, ...append(ctx, 'worker', toolResult(call, result)) };
}

// ── leaving a running state ───────────────────────────────────────────────────

/**
 * The proposed step becomes the session's step, sent on to approve_step (`waits`) or to the
 * worker. The manager's tool result said what the policy decided; where a guard swapped with
 * provide() decided otherwise, the manager is told what happened instead.
 */
export function takeStep(ctx: SessionContext, waits: boolean): Update {
  const { step } = ctx.reply.boundary as Extract<Boundary, { tool: 'run_worker' }>;
  if (waits === stepNeedsApproval(step)) return { step, reply: NO_REPLY };
  const content = `Correction: ${runWorkerResult({ ...step, approval: 'model' }, waits)}`;
  return { step, reply: NO_REPLY, ...append(ctx, 'manager', { role: 'user', content }) };
}

export function showManagerMessage(ctx: SessionContext): Update {
  const b = ctx.reply.boundary as Exclude<Boundary, { tool: 'run_worker' }>;
  const questions = b.tool === 'ask_user' && b.questions?.length ? toQuestions(b.questions) : null;
  const message = b.tool === 'finish' ? (b.summary ?? null) : (b.message ?? null);
  const assessment = b.tool === 'ask_user' ? (b.assessment ?? null) : null;
  return { reply: NO_REPLY, message, assessment, questions };
}

export function publishArtifact(ctx: SessionContext): Update {
  const step = ctx.step!;
  const id = nextArtifactId(ctx.artifacts);
  const { outputs, questions: asked } = ctx.reply.workerChoice;
  const at = ctx.reply.at;
  const written: [string, number][] = [];
  let blackboard: Blackboard = ctx.blackboard;
  for (const [tag, body] of Object.entries(outputs!)) {
    const next = withVersion(blackboard, tag, { body, writtenBy: step.workerId, artifactId: id, ...stamp(at) });
    blackboard = next.board;
    written.push([tag, next.version.version]);
  }
  // fromEntries defines own keys: `tags[tag] = …` would set the prototype for "__proto__".
  const tags: Record<string, number> = Object.fromEntries(written);
  const questions = asked?.length ? toQuestions(asked) : undefined;
  const artifacts = produce(ctx.artifacts, (list) => {
    if (step.revises)
      moveArtifact(
        list.find((a) => a.id === step.revises)!,
        'superseded',
      );
    list.push({
      id,
      workerId: step.workerId,
      tags,
      status: 'pending_review',
      ...(step.roleId ? { roleId: step.roleId } : {}),
      ...(questions ? { questions } : {}),
      ...(step.revises ? { revises: step.revises } : {}),
    });
  });
  return { blackboard: retainBodies(blackboard, artifacts), artifacts, reply: NO_REPLY, questions: questions ?? null };
}

export function askWorkerQuestions(ctx: SessionContext): Update {
  return { questions: toQuestions(ctx.reply.workerChoice.questions!), reply: NO_REPLY };
}

export function noticeBurstLimit(ctx: SessionContext): Update {
  return { notice: burstLimitNotice(ctx.maxBurst), reply: NO_REPLY };
}

/** The token budget stopped the burst before the next manager call. */
export function noticeTokenBudget(ctx: SessionContext): Update {
  return { notice: violationNotice(ctx), reply: NO_REPLY };
}

/** The token budget stopped a worker before its next call: its step ends, as for the burst limit. */
export function noticeWorkerTokenBudget(ctx: SessionContext): Update {
  const ledger = ctx.ledger;
  const content =
    `The worker ${ctx.step?.workerId ?? ''} stopped before submitting: this burst used ` +
    `${ledger.burstTokens} tokens of its budget of ${ledger.maxBurstTokens} (maxBurstTokens); its step ` +
    `ended. Decide with the user how to go on.`;
  return { ...noticeTokenBudget(ctx), step: null, ...append(ctx, 'manager', { role: 'user', content }) };
}

function violationNotice(ctx: SessionContext): string {
  const ledger = ctx.ledger;
  return burstTokensNotice(ledger.burstTokens, ledger.lastCallTokens, ledger.maxBurstTokens ?? 0);
}

// Masked: a model's error may echo a key or a URL with credentials, and notices are stored and shown.
const errorText = (error: unknown) => redactSecrets(error instanceof Error ? error.message : String(error));

export function noticeModelFailure(actor: ToolActor, error: unknown): Update {
  const detail = errorText(error);
  return { notice: `The ${actor} model failed: ${detail} Nothing was lost; your next input tries again.`, reply: NO_REPLY };
}

/** A worker that used up the burst ends its step; the manager hears of it with the next input. */
export function noticeWorkerBurstLimit(ctx: SessionContext): Update {
  const content = `The worker ${ctx.step?.workerId ?? ''} used all ${ctx.maxBurst} rounds without submitting; its step ended. Decide with the user how to go on.`;
  return { ...noticeBurstLimit(ctx), step: null, ...append(ctx, 'manager', { role: 'user', content }) };
}

/** A failed worker run ends the step: the manager hears it with the user's next input and re-plans. */
export function noticeWorkerFailure(ctx: SessionContext, error: unknown): Update {
  const content = `The worker ${ctx.step?.workerId ?? ''} failed: ${errorText(error)} Decide with the user how to go on.`;
  return { ...noticeModelFailure('worker', error), step: null, ...append(ctx, 'manager', { role: 'user', content }) };
}

/** A message to the manager, read with its next round. */
export function tellManager(ctx: SessionContext, content: string): Update {
  return append(ctx, 'manager', { role: 'user', content });
}

export function recordRejection(ctx: SessionContext, rejection: Rejection): Update {
  const rejections = [...ctx.rejections, rejection];
  return { rejections: rejections.length > REJECTION_LOG_SIZE ? rejections.slice(-REJECTION_LOG_SIZE) : rejections };
}
