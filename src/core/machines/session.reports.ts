/**
 * What the chart tells its listeners: the events its actions `emit` (XState v5 `emit`,
 * delivered to `actor.on(...)` once the macrostep is over). Each is built here from the
 * context the action sees, as a pure function: emitted events are action objects, so a
 * transition stays deterministic. The runtime's event hub only stamps them (`sessionId`,
 * `at`, a round's `durationMs`: the clock is not the chart's) and forwards them.
 */
import type { ChatMessage } from '../models/model.js';
import type { ToolActor } from '../tools/schemas.js';
import type { ToolCallInput, ToolCallOutput, ToolWait } from '../tools/server-tools.js';
import { MAX_TOOL_NAME, type SessionStreamEvent, type StreamEventOf } from './stream-events.js';
import type { SessionContext, TurnOutput } from './session.context.js';
import { approvalRequiredBy } from './approval.js';
import { branchOf, branchOfArtifact } from './team.js';
import { STEWARD } from './deadline-outcomes.js';
import type { DeadlinePassedEvent } from './deadlines.js';

type Unstamped<E> = E extends { type: 'round_finished' } ? Omit<E, 'sessionId' | 'at' | 'durationMs'> : Omit<E, 'sessionId' | 'at'>;

/** An event as the chart emits it: a live event without what only the runtime knows. */
export type ChartEvent = SessionStreamEvent extends infer E ? (E extends SessionStreamEvent ? Unstamped<E> : never) : never;

/** What a waiting state waits for: its name under `waiting_user`. */
export type WaitingReason = StreamEventOf<'waiting'>['reason'];

export type RoundInfo = Pick<StreamEventOf<'round_started'>, 'agent' | 'workerId' | 'burst' | 'maxBurst' | 'round'>;

/**
 * The model round `agent` is about to run (or runs) in `context`: the figures include it.
 * `counted`: the context already counts the round (read after its reply was accepted).
 */
export function roundOf(context: SessionContext, agent: ToolActor, counted = false): RoundInfo {
  const next = counted ? 0 : 1;
  return {
    agent,
    workerId: agent === 'worker' ? (context.step?.workerId ?? null) : null,
    burst: Math.min(context.burst + next, context.maxBurst),
    maxBurst: context.maxBurst,
    round: context.ledger.rounds + next,
  };
}

/** A model may invent any tool name, of any length: events carry at most MAX_TOOL_NAME characters. */
export function clipName(name: unknown): string {
  const text = String(name);
  return text.length > MAX_TOOL_NAME ? `${text.slice(0, MAX_TOOL_NAME - 1)}…` : text;
}

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

function usageOf(value: unknown): StreamEventOf<'round_finished'>['usage'] {
  const u = value as { promptTokens?: unknown; completionTokens?: unknown } | null | undefined;
  const ok = (n: unknown): n is number => typeof n === 'number' && Number.isInteger(n) && n >= 0;
  return u && ok(u.promptTokens) && ok(u.completionTokens) ? { promptTokens: u.promptTokens, completionTokens: u.completionTokens } : null;
}

/** The round that just replied, read from the context its accept left (the round is counted there). */
export function roundReplied(accepted: SessionContext, agent: ToolActor, output: TurnOutput): ChartEvent {
  return {
    type: 'round_finished',
    ...roundOf(accepted, agent, true),
    outcome: 'replied',
    usage: usageOf(output?.usage),
    totalUsage: { ...accepted.ledger.usage },
    toolCalls: accepted.reply.queue.map((q) => clipName(q.call.function.name)),
  };
}

/** The round whose model call failed, read from the context before the failure is noticed. */
export function roundFailed(context: SessionContext, agent: ToolActor, error: unknown): ChartEvent {
  return {
    type: 'round_finished',
    ...roundOf(context, agent),
    outcome: 'failed',
    usage: null,
    totalUsage: { ...context.ledger.usage },
    toolCalls: [],
    error: errorText(error),
  };
}

/**
 * The head call of the queue, checked: accepted, or refused by `rule` with the tool result
 * the model was told (`refusal`, as appended to its transcript: "Error: …").
 */
export function callChecked(context: SessionContext, actor: ToolActor, refused?: { rule: string; result: ChatMessage }): ChartEvent | null {
  const head = context.reply.queue[0];
  if (!head) return null;
  return {
    type: 'tool_call_checked',
    agent: actor,
    workerId: actor === 'worker' ? (context.step?.workerId ?? null) : null,
    callId: head.call.id,
    tool: clipName(head.call.function.name),
    accepted: !refused,
    ...(refused ? { rule: refused.rule, message: String(refused.result.content).replace(/^Error: /, '') } : {}),
  };
}

/** The artifact the last publish added (the newest of the list). */
export function artifactPublished(context: SessionContext): ChartEvent | null {
  const a = context.artifacts[context.artifacts.length - 1];
  return a ? { type: 'artifact_published', artifactId: a.id, workerId: a.workerId, tags: { ...a.tags }, revises: a.revises ?? null } : null;
}

/**
 * The decision that ends the wait `reason`: the user event the waiting state took on its way
 * out, or the deadline that rejected or escalated it. Null for any other exit.
 */
export function decisionMade(context: SessionContext, reason: WaitingReason, event: { type: string }): ChartEvent | null {
  // A deadline that rejected or escalated the wait decided it: Steward did, by its rule.
  if (event.type === 'deadline_passed') return { type: 'decision', reason, wait: context.waits.opened, eventType: event.type, by: STEWARD, edits: [] };
  if (!event.type.startsWith('user_')) return null;
  const { by, edits } = event as { by?: unknown; edits?: unknown };
  const item = teamItemDecided(context, event);
  const step = item === undefined ? context.step : branchOf(context, item)?.step;
  return {
    type: 'decision',
    reason,
    wait: context.waits.opened,
    eventType: event.type,
    by: typeof by === 'string' ? by : null,
    edits: edits && typeof edits === 'object' ? Object.keys(edits) : [],
    ...(reason === 'approve_step' && step ? { approvalRequiredBy: approvalRequiredBy(step) } : {}),
    ...(item !== undefined ? { item } : {}),
  };
}

/** The item of a fan-out a decision names (a step's run_worker call, an artifact under review), if it names one. */
function teamItemDecided(context: SessionContext, event: { type: string }): string | undefined {
  const { item, artifactId } = event as { item?: unknown; artifactId?: unknown };
  if (typeof item === 'string' && branchOf(context, item)) return item;
  if (typeof artifactId === 'string' && branchOfArtifact(context, artifactId)) return artifactId;
  return undefined;
}

/** The call a decision names, as decided: who, whether they edited it (read after the decision's update). */
export function toolCallDecided(decided: SessionContext, callId: string, reason: ToolWait, answered?: 'answered' | 'result_given'): ChartEvent | null {
  const item = decided.reply.toolCalls?.find((c) => c.callId === callId);
  if (!item) return null;
  const decision = answered ?? (item.status === 'approved' || item.status === 'rejected' ? item.status : null);
  if (decision === null) return null;
  return {
    type: 'tool_call_decided',
    callId,
    server: item.server,
    tool: clipName(item.tool),
    wait: decided.waits.opened,
    reason,
    decision,
    by: item.decidedBy ?? null,
    edited: item.edited === true,
  };
}

/** The approved call `running.worker.calling` starts. */
export function toolCallStarted(input: ToolCallInput): ChartEvent {
  return { type: 'tool_call_started', callId: input.item.callId, server: input.item.server, tool: clipName(input.item.tool) };
}

/** How the call under way ended: from the `toolCall` actor's output, or its failure (`output` undefined). */
export function toolCallFinished(input: ToolCallInput, output: ToolCallOutput | undefined): ChartEvent {
  const { callId, server, tool } = input.item;
  const outcome = output === undefined ? 'failed' : output.outcome;
  const isError = output === undefined || (output.outcome === 'result' && output.isError === true);
  const duration = output && 'durationMs' in output ? output.durationMs : undefined;
  const durationMs = typeof duration === 'number' && Number.isFinite(duration) && duration >= 0 ? duration : null;
  return { type: 'tool_call_finished', callId, server, tool: clipName(tool), outcome, isError, durationMs };
}

/**
 * A deadline of the open wait passed, and what its rule does (read before the outcome changes
 * the context): the wait, the rule's place in its chain, and for an escalation the group.
 */
export function deadlinePassed(context: SessionContext, reason: WaitingReason, event: DeadlinePassedEvent): ChartEvent {
  const rule = context.waits.deadline;
  return {
    type: 'deadline_passed',
    reason,
    wait: event.wait,
    level: event.level,
    outcome: rule?.outcome ?? 'reject',
    after: rule?.after ?? '',
    to: rule?.to ?? null,
  };
}
