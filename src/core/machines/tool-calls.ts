/**
 * The chart's updates for a worker's server-tool calls (MCP tools), pure functions of the
 * context and the event like session.updates.ts. A call that passes the rules becomes an item
 * of the reply (`reply.toolCalls`): `pending` when a person decides, else `approved`. The wait
 * `approve_tool` decides each pending item on its own; `running.worker.calling` runs the first
 * approved item with the arguments it was approved with, and its result (or a rejection's
 * reason) is the call's one tool result in the worker's transcript. A server that asks a person
 * for input during the call makes it wait in `tool_input`; a call cut off by a stopped process
 * waits in `tool_interrupted` (a person runs it again, skips it, or gives its result). Only an approved item ever
 * reaches the `toolCall` actor (`nextToolCall`): a call a person rejected, has not decided, or
 * approved for another definition never runs.
 */
import { InternalError } from '../errors.js';
import { clip, DEFAULT_LIMITS } from '../limits.js';
import type { ChatMessage } from '../models/model.js';
import type { QueuedCall } from '../tools/reply.js';
import {
  callsOfWait,
  pinnedTool,
  TOOL_WAIT_STATUS,
  toolPatternAllows,
  type PinnedTool,
  type ToolCallInput,
  type ToolCallItem,
  type ToolCallOutput,
  type ToolInputResponse,
  type ToolWait,
  type ToolCallVerdict,
  type TurnTools,
} from '../tools/server-tools.js';
import type { PackageInfo, SessionContext } from './session.context.js';
import { appendToTranscript } from './transcript.js';

type Update = Partial<SessionContext>;

/** Tool definitions a session pins at most: a server listing thousands is refused by the host before this. */
export const MAX_PINNED_TOOLS = 512;

/** The worker's transcript with `messages` appended. */
function appendToWorker(ctx: SessionContext, ...messages: ChatMessage[]): Update {
  const t = ctx.transcripts;
  return { transcripts: { manager: t.manager, worker: appendToTranscript(t.worker, t.window, messages), window: t.window } };
}

const toolResult = (callId: string, content: string): ChatMessage => ({ role: 'tool', tool_call_id: callId, content });

/**
 * What a worker turn's output adds: the definitions it pinned (kept with the package, first
 * pin wins) and its verdicts on the reply's server-tool calls. Nothing for a turn without tools.
 */
export function acceptTurnTools(ctx: SessionContext, tools: TurnTools | undefined): { package?: SessionContext['package']; verdicts?: ToolCallVerdict[] } {
  if (!tools || typeof tools !== 'object') return {};
  const verdicts = Array.isArray(tools.verdicts) ? tools.verdicts : [];
  const fresh = Array.isArray(tools.pinned) ? tools.pinned : [];
  const pkg = ctx.package;
  const pins = pkg?.pinnedTools ?? [];
  const added = fresh.filter((p) => !pinnedTool(pins, p.server, p.name));
  const pinned = pkg && added.length ? { package: { ...pkg, pinnedTools: [...pins, ...added].slice(0, MAX_PINNED_TOOLS) } } : {};
  return { ...pinned, ...(verdicts.length ? { verdicts } : {}) };
}

/**
 * The turn's verdict on a queued call: undefined when the call is not a server tool the turn
 * offered (judged, and pinned). Which tools a worker is offered is the turn's to decide: its
 * front matter's `tools`.
 */
export function verdictOf(ctx: SessionContext, call: QueuedCall): ToolCallVerdict | undefined {
  const verdict = ctx.reply.verdicts?.find((v) => v.callId === call.call.id);
  return verdict && pinnedTool(ctx.package?.pinnedTools, verdict.server, verdict.tool) ? verdict : undefined;
}

/** The model names of the MCP tools the running worker may call, as pinned (for rule 1's list of what is available). */
export function offeredToolNames(ctx: SessionContext): string[] {
  const worker = ctx.package?.workers.find((w) => w.id === ctx.step?.workerId);
  const patterns = worker?.tools ?? [];
  if (patterns.length === 0) return [];
  return (ctx.package?.pinnedTools ?? []).filter((p) => patterns.some((pattern) => toolPatternAllows(pattern, p.server, p.name))).map((p) => p.modelName);
}

/** Settles a server-tool call that passed the rules: an item of the reply, waiting for a person or approved. */
export function settleServerCall(ctx: SessionContext, call: QueuedCall, verdict: ToolCallVerdict): Update {
  const pinned = pinnedTool(ctx.package?.pinnedTools, verdict.server, verdict.tool);
  if (!pinned) throw new InternalError(`Server tool ${verdict.server}.${verdict.tool} was judged by the worker's turn but never pinned.`);
  const item: ToolCallItem = {
    callId: call.call.id,
    server: verdict.server,
    tool: verdict.tool,
    arguments: call.args as Record<string, unknown>,
    digest: pinned.digest,
    status: verdict.asks ? 'pending' : 'approved',
    approvalBy: verdict.approvalBy,
  };
  return { reply: { ...ctx.reply, queue: ctx.reply.queue.slice(1), toolCalls: [...(ctx.reply.toolCalls ?? []), item] } };
}

export const pendingToolCalls = (ctx: SessionContext): ToolCallItem[] => callsOfWait(ctx.reply.toolCalls, 'approve_tool');
export const hasPendingToolCalls = (ctx: SessionContext): boolean => pendingToolCalls(ctx).length > 0;
export const hasApprovedToolCall = (ctx: SessionContext): boolean => (ctx.reply.toolCalls ?? []).some((c) => c.status === 'approved');

/** The wait a call is decided in, by its status before the decision: undecided, asking for input, or cut off. */
export function waitOfCall(ctx: SessionContext, callId: string): ToolWait {
  const status = ctx.reply.toolCalls?.find((c) => c.callId === callId)?.status;
  const waits = Object.keys(TOOL_WAIT_STATUS) as ToolWait[];
  return waits.find((wait) => TOOL_WAIT_STATUS[wait] === status) ?? 'approve_tool';
}

/** The call whose server asked a person for input (tool_input), if any. */
export const askingToolCall = (ctx: SessionContext): ToolCallItem | undefined => callsOfWait(ctx.reply.toolCalls, 'tool_input')[0];
/** The call cut off by a stopped process (tool_interrupted), if any. */
export const interruptedToolCall = (ctx: SessionContext): ToolCallItem | undefined => callsOfWait(ctx.reply.toolCalls, 'tool_interrupted')[0];

/**
 * The `toolCall` actor's input: the first approved item, with the definition it was approved
 * for. Never a pending or rejected one: this is the one way a call reaches a server.
 */
export function nextToolCall(ctx: SessionContext): ToolCallInput {
  const item = (ctx.reply.toolCalls ?? []).find((c) => c.status === 'approved');
  const pinned = item && pinnedTool(ctx.package?.pinnedTools, item.server, item.tool);
  const pkg = ctx.package;
  if (!item || !pinned || !pkg) throw new InternalError('running.worker.calling was entered without an approved call of a pinned tool.');
  return {
    sessionId: ctx.sessionId,
    packageId: pkg.id,
    ...(pkg.version !== undefined ? { packageVersion: pkg.version } : {}),
    ...(pkg.toolVariables ? { variables: pkg.toolVariables } : {}),
    item,
    pinned,
  };
}

/** Replaces the item `callId` with `change(item)`. */
function withItem(ctx: SessionContext, callId: string, change: (item: ToolCallItem) => ToolCallItem): Update {
  const toolCalls = (ctx.reply.toolCalls ?? []).map((c) => (c.callId === callId ? change(c) : c));
  return { reply: { ...ctx.reply, toolCalls } };
}

/**
 * A person approved a pending call, with their edit of its arguments if any (checked against
 * the tool's input schema before the event reached the chart). The approval binds to the
 * definition pinned now: a tool changed since is not run (`reopenChangedTool`).
 */
export function approveToolCall(ctx: SessionContext, callId: string, edited: Record<string, unknown> | undefined, by: string | undefined): Update {
  const pinned = (item: ToolCallItem) => pinnedTool(ctx.package?.pinnedTools, item.server, item.tool);
  return withItem(ctx, callId, (item) => {
    // Run again after an interruption means a new call: a question of the old one is not carried over.
    const { changed: _shown, input: _asked, ...rest } = item;
    return {
      ...rest,
      status: 'approved',
      digest: pinned(item)?.digest ?? item.digest,
      ...(edited ? { arguments: edited, edited: true } : {}),
      ...(by ? { decidedBy: by } : {}),
    };
  });
}

/**
 * A person rejected a pending call: it never runs; the model gets the reason as the call's
 * result. Rejecting an interrupted call skips it: it is not run again, and the model is told it
 * may or may not have taken effect.
 */
export function rejectToolCall(ctx: SessionContext, callId: string, reason: string | undefined, by: string | undefined): Update {
  const said = reason?.trim() ? ` Their reason: ${clip(reason.trim(), DEFAULT_LIMITS.refusalMessageChars)}` : '';
  const wasInterrupted = ctx.reply.toolCalls?.find((c) => c.callId === callId)?.status === 'interrupted';
  const rejected = withItem(ctx, callId, (item) => ({ ...item, status: 'rejected', ...(reason ? { reason } : {}), ...(by ? { decidedBy: by } : {}) }));
  const context = { ...ctx, ...rejected };
  const told = wasInterrupted
    ? `Error: this call was cut off when the process running it stopped, so it may or may not have taken effect; a person chose not to run it again. Check what it did before you call it again.${said}`
    : `Error: a person rejected this call; it did not run.${said}`;
  return { ...rejected, ...appendToWorker(context, toolResult(callId, told)) };
}

/**
 * The server asked a person for input during the call under way: the call waits (tool_input)
 * with the server's requests, and its opaque state for the call made again with the answers.
 */
export function askForToolInput(ctx: SessionContext, output: Extract<ToolCallOutput, { outcome: 'input_required' }>): Update {
  const { item } = nextToolCall(ctx);
  return withItem(ctx, item.callId, (c) => ({
    ...c,
    status: 'asking',
    input: {
      requests: output.requests,
      ...(output.requestState !== undefined ? { requestState: output.requestState } : {}),
      ...(output.live ? { live: true } : {}),
    },
  }));
}

/** A person answered the server's requests: the call is approved again and goes on with the answers. */
export function answerToolInput(ctx: SessionContext, callId: string, responses: Record<string, ToolInputResponse>, by: string | undefined): Update {
  return withItem(ctx, callId, (c) => ({
    ...c,
    status: 'approved',
    ...(c.input ? { input: { ...c.input, responses } } : {}),
    ...(by ? { decidedBy: by } : {}),
  }));
}

/** The call under way was cut off by a stopped process: it waits for a person (tool_interrupted), not repeated. */
export function holdInterruptedCall(ctx: SessionContext): Update {
  const { item } = nextToolCall(ctx);
  return withItem(ctx, item.callId, (c) => ({ ...c, status: 'interrupted' }));
}

/** A person gave the result of an interrupted call by hand: the model reads it as the tool's result. */
export function giveToolResult(ctx: SessionContext, callId: string, result: string, by: string | undefined): Update {
  const done = withItem(ctx, callId, (c) => ({ ...c, status: 'done', resultGiven: true, ...(by ? { decidedBy: by } : {}) }));
  const told = `(A person gave this result by hand: the call was cut off when the process running it stopped.)\n${result}`;
  return { ...done, ...appendToWorker({ ...ctx, ...done }, toolResult(callId, told)) };
}

/** The model's tool result for how a call ended. */
function resultText(output: ToolCallOutput): string {
  if (output.outcome === 'failed') return `Error: the call failed: ${clip(String(output.error), DEFAULT_LIMITS.refusalMessageChars)}`;
  const text = output.outcome === 'result' && typeof output.text === 'string' ? output.text : '';
  return output.outcome === 'result' && output.isError ? `Error: ${text}` : text;
}

/**
 * The call under way ended (the server answered, or the call failed): its item is done and
 * the call's one tool result says how. The output is the actor's, for the call it was given.
 */
export function recordToolResult(ctx: SessionContext, output: Extract<ToolCallOutput, { outcome: 'result' | 'failed' }>): Update {
  const { item } = nextToolCall(ctx);
  const done = withItem(ctx, item.callId, (c) => ({ ...c, status: 'done' }));
  return { ...done, ...appendToWorker({ ...ctx, ...done }, toolResult(item.callId, resultText(output))) };
}

/** The `toolCall` actor threw (a bug, or a host that threw): the call is done, and the model is told it failed. */
export function recordToolFailure(ctx: SessionContext, error: unknown): Update {
  const { item } = nextToolCall(ctx);
  const message = error instanceof Error ? error.message : String(error);
  return recordToolResult(ctx, { callId: item.callId, outcome: 'failed', error: message });
}

/**
 * The tool's definition on its server is no longer the one the call was approved for: the
 * call did not run; it waits for a person again, showing what the tool is now, and the new
 * definition is what a new approval binds to.
 */
export function reopenChangedTool(ctx: SessionContext, output: Extract<ToolCallOutput, { outcome: 'definition_changed' }>): Update {
  const { item, pinned: before } = nextToolCall(ctx);
  // The same tool (whatever the actor says), which the model keeps calling by the name it was shown.
  const after: PinnedTool = { ...output.definition, server: before.server, name: before.name, modelName: before.modelName };
  const pins = (ctx.package?.pinnedTools ?? []).map((p) => (p === before ? after : p));
  const reopened = withItem(ctx, item.callId, (c) => {
    const { decidedBy: _by, edited: _edited, ...rest } = c;
    return { ...rest, status: 'pending', changed: { before, after } };
  });
  return { ...reopened, ...(ctx.package ? { package: { ...ctx.package, pinnedTools: pins } } : {}) };
}

/**
 * The new package version a session upgrades to (`steward upgrade`), re-pinning its tools: the
 * next worker turn pins them as they are then. Only the definitions the open calls are bound to
 * (the reply's, and a held branch's) stay pinned, so a wait in progress keeps what it shows; the session's tool variables stay too.
 */
export function repinnedPackage(ctx: SessionContext, next: PackageInfo): PackageInfo {
  // The reply under way, and those of a fan-out's held branches (team.ts): their calls run after the fan-in.
  const replies = [ctx.reply, ...(ctx.team?.branches ?? []).map((b) => b.reply)];
  const open = replies.flatMap((r) => r?.toolCalls ?? []).filter((c) => c.status !== 'rejected' && c.status !== 'done');
  const kept = (ctx.package?.pinnedTools ?? []).filter((p) => open.some((c) => c.server === p.server && c.tool === p.name));
  const { pinnedTools: _old, toolVariables: _theirs, ...rest } = next;
  const variables = ctx.package?.toolVariables;
  return { ...rest, ...(kept.length ? { pinnedTools: kept } : {}), ...(variables ? { toolVariables: variables } : {}) };
}
