/**
 * One AG-UI run of a session, as events: Steward's live events (core/machines/stream-events.ts)
 * turned into AG-UI 1.0 events while the session runs, and the snapshots that close the run.
 * Every event is checked with `@ag-ui/core`'s own zod schema before it leaves, so a mistake
 * here is an error of the run, never a malformed event on the wire.
 */
import { EventType, type BaseEvent, type Interrupt } from '@ag-ui/core';
import { EventSchema } from '@ag-ui/core/schemas';
import jsonPatch from 'fast-json-patch';
import type { SessionStreamEvent, StreamEventOf } from '../../core/machines/stream-events.js';
import type { SessionContext } from '../../core/machines/session.context.js';
import type { ToolCall } from '../../core/models/model.js';
import type { SessionView } from '../../core/view.js';
import { messagesOf } from './chat-messages.js';

// run.ts reads the chat's ids from here, where messagesOf was first.
export { messagesOf } from './chat-messages.js';

export type Emit = (event: BaseEvent) => void;

/** An event checked by the protocol's schema (throws a ZodError on a mistake of ours). */
export function checked(event: BaseEvent): BaseEvent {
  return EventSchema.parse(event) as BaseEvent;
}

/** The view as AG-UI state: plain JSON. */
export function stateOf(view: SessionView): Record<string, unknown> {
  return JSON.parse(JSON.stringify(view)) as Record<string, unknown>;
}

/** The manager's latest run_worker call in the context's window: what an approval interrupt is bound to. */
export function pendingRunWorkerCall(context: SessionContext): string | undefined {
  const messages = context.transcripts.manager.messages;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role !== 'assistant') continue;
    const call = m.tool_calls?.findLast((c) => c.function.name === 'run_worker');
    if (call) return call.id;
  }
  return undefined;
}

type Round = StreamEventOf<'round_started'>;

/** The tool results in the worker's transcript. */
const workerResults = (context: SessionContext) =>
  context.transcripts.worker.messages.filter(
    (m): m is Extract<SessionContext['transcripts']['worker']['messages'][number], { role: 'tool' }> => m.role === 'tool',
  );

/** A tool call the model is writing: its id and name once known, the arguments not sent yet, whether it was opened. */
interface LiveCall {
  agent: 'manager' | 'worker';
  id?: string;
  name?: string;
  pending: string;
  open: boolean;
}

/** What a model round is called: the AG-UI step name, and the A2A working note. */
export const stepName = (e: Pick<Round, 'agent' | 'workerId' | 'round' | 'burst' | 'maxBurst'>) =>
  `${e.agent === 'manager' ? 'manager' : `worker ${e.workerId ?? ''}`} round ${e.round} (burst ${e.burst}/${e.maxBurst})`;

/** Whose a model round is: the manager's, or a worker's (a fan-out runs several workers' rounds at once). */
const roundOwner = (e: Pick<Round, 'agent' | 'workerId'>) => `${e.agent}:${e.workerId ?? ''}`;

/**
 * Turns one session's live events into AG-UI events while a run lasts. `context()` and
 * `view()` read the running session (the arguments a tool call was checked with, the state
 * to diff).
 */
export class RunTranslator {
  private state: Record<string, unknown>;
  /** The text message open in the current round, if the model streamed text. */
  private text: { id: string } | null = null;
  /** Accepted run_worker results wait: an approval interrupt answers them in the next run instead. */
  private heldResults: BaseEvent[] = [];
  private results = 0;
  /** The latest round of each agent: the live assistant message its text and tool calls belong to. */
  private rounds = { manager: 0, worker: 0 };
  /** Tool calls the model streams in the current round, by place in its reply: opened once their id and name are known. */
  private live = new Map<string, LiveCall>();
  /** Ids of the calls sent live (start, arguments, end): their check sends only the result. */
  private sentLive = new Set<string>();
  /** The worker's tool results the model already had when the run started: an MCP call's result is sent once, by the run it came in. */
  private resultsBefore: Set<string>;
  /**
   * The name of each open step, by whose round it is (the agent, and the worker): a round's end
   * closes the step its start opened. The rounds of a fan-out's workers run at once, and the
   * chart numbers each one's end by the rounds counted by then, not as it numbered its start.
   */
  private steps = new Map<string, string>();

  constructor(
    private readonly emit: Emit,
    private readonly context: () => SessionContext,
    private readonly view: () => SessionView,
    private readonly runId: string,
  ) {
    this.state = stateOf(view());
    this.resultsBefore = new Set(workerResults(context()).map((m) => m.tool_call_id));
  }

  /** The state at the run's start, as the first snapshot. */
  snapshot(): void {
    this.emit({ type: EventType.STATE_SNAPSHOT, snapshot: this.state } as BaseEvent);
  }

  on(event: SessionStreamEvent): void {
    switch (event.type) {
      case 'round_started':
        this.releaseHeld();
        this.toolResults();
        this.live.clear();
        this.rounds[event.agent] = event.round;
        this.steps.set(roundOwner(event), stepName(event));
        this.emit({ type: EventType.STEP_STARTED, stepName: stepName(event) } as BaseEvent);
        return;
      case 'text_delta': {
        if (!this.text) {
          this.text = { id: this.liveMessageId(event.agent) };
          this.emit({ type: EventType.TEXT_MESSAGE_START, messageId: this.text.id, role: 'assistant' } as BaseEvent);
        }
        if (event.text) this.emit({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: this.text.id, delta: event.text } as BaseEvent);
        return;
      }
      case 'tool_call_delta':
        this.toolCallDelta(event);
        return;
      case 'round_finished':
        if (this.text) this.emit({ type: EventType.TEXT_MESSAGE_END, messageId: this.text.id } as BaseEvent);
        this.text = null;
        this.endLiveCalls();
        this.emit({ type: EventType.STEP_FINISHED, stepName: this.steps.get(roundOwner(event)) ?? stepName(event) } as BaseEvent);
        this.steps.delete(roundOwner(event));
        this.delta();
        return;
      case 'tool_call_checked':
        this.toolCall(event);
        return;
      case 'artifact_published':
      case 'waiting':
      case 'done':
        this.toolResults();
        this.delta();
        return;
      default:
        return;
    }
  }

  /** A tool call's result that waits for the session's next round (or the run's end): sent only if the run gets that far. */
  hold(result: BaseEvent): void {
    this.heldResults.push(result);
  }

  /** Closes the run: what is still open, held results (unless `interrupts` answer them), the snapshots. */
  finish(interrupts: readonly Interrupt[]): void {
    if (this.text) this.emit({ type: EventType.TEXT_MESSAGE_END, messageId: this.text.id } as BaseEvent);
    this.text = null;
    this.endLiveCalls();
    this.toolResults();
    const bound = new Set(interrupts.flatMap((i) => (i.toolCallId ? [i.toolCallId] : [])));
    for (const result of this.heldResults.splice(0)) if (!bound.has(String(result.toolCallId))) this.emit(result);
    this.state = stateOf(this.view());
    this.emit({ type: EventType.STATE_SNAPSHOT, snapshot: this.state } as BaseEvent);
    this.emit({ type: EventType.MESSAGES_SNAPSHOT, messages: messagesOf(this.context(), this.view().waitingReason) } as BaseEvent);
  }

  /**
   * A piece of a tool call as the model writes it: TOOL_CALL_START once its id and name are
   * known (the pieces before are kept until then), then TOOL_CALL_ARGS per piece; the round's
   * end closes it (TOOL_CALL_END), and its check sends the result.
   */
  private toolCallDelta(event: StreamEventOf<'tool_call_delta'>): void {
    const key = `${event.agent}:${event.callIndex}`;
    const call = this.live.get(key) ?? { agent: event.agent === 'manager' ? ('manager' as const) : ('worker' as const), pending: '', open: false };
    this.live.set(key, call);
    call.id ??= event.callId;
    call.name ??= event.name;
    if (call.open) {
      if (event.argumentsDelta) this.emit({ type: EventType.TOOL_CALL_ARGS, toolCallId: call.id!, delta: event.argumentsDelta } as BaseEvent);
      return;
    }
    call.pending += event.argumentsDelta;
    if (!call.id || !call.name || this.sentLive.has(call.id)) return;
    call.open = true;
    this.sentLive.add(call.id);
    this.emit({ type: EventType.TOOL_CALL_START, toolCallId: call.id, toolCallName: call.name, parentMessageId: this.liveMessageId(call.agent) } as BaseEvent);
    if (call.pending) this.emit({ type: EventType.TOOL_CALL_ARGS, toolCallId: call.id, delta: call.pending } as BaseEvent);
    call.pending = '';
  }

  /** The model has written its reply: every call it streamed is complete. */
  private endLiveCalls(): void {
    for (const call of this.live.values()) if (call.open) this.emit({ type: EventType.TOOL_CALL_END, toolCallId: call.id! } as BaseEvent);
    this.live.clear();
  }

  /** A tool call as the chart checked it: start, its arguments in one chunk and end (unless it was sent live), then the check's result. */
  private toolCall(event: StreamEventOf<'tool_call_checked'>): void {
    const agent = event.agent;
    if (this.sentLive.has(event.callId)) {
      this.emitResult(event);
      return;
    }
    const calls = this.context().transcripts[agent].messages.flatMap((m): ToolCall[] => (m.role === 'assistant' ? (m.tool_calls ?? []) : []));
    const call = calls.findLast((c) => c.id === event.callId);
    this.emit({ type: EventType.TOOL_CALL_START, toolCallId: event.callId, toolCallName: event.tool, parentMessageId: this.liveMessageId(agent) } as BaseEvent);
    if (call?.function.arguments) this.emit({ type: EventType.TOOL_CALL_ARGS, toolCallId: event.callId, delta: call.function.arguments } as BaseEvent);
    this.emit({ type: EventType.TOOL_CALL_END, toolCallId: event.callId } as BaseEvent);
    this.emitResult(event);
  }

  /**
   * The results of the worker's MCP calls the model got in this run (the server's answer, or a
   * person's rejection), each once: a call's result is what it did, never its check (a call that
   * waits for a person has no result yet; its interrupt names it). Read from the worker's
   * transcript once the chart has written them (at the next round, wait or end).
   */
  private toolResults(): void {
    const calls = new Set((this.context().reply.toolCalls ?? []).map((c) => c.callId));
    for (const message of workerResults(this.context())) {
      if (!calls.has(message.tool_call_id) || this.resultsBefore.has(message.tool_call_id)) continue;
      this.resultsBefore.add(message.tool_call_id);
      this.emit({
        type: EventType.TOOL_CALL_RESULT,
        messageId: `${this.runId}:result:${++this.results}`,
        toolCallId: message.tool_call_id,
        role: 'tool',
        content: String(message.content),
      } as BaseEvent);
    }
  }

  /** The check's result of a tool call (held for an approved run_worker: the approval answers it; none for an MCP call: what it did is its result). */
  private emitResult(event: StreamEventOf<'tool_call_checked'>): void {
    const agent = event.agent;
    if (event.accepted && agent === 'worker' && (this.context().package?.pinnedTools ?? []).some((p) => p.modelName === event.tool)) return;
    const content = event.accepted
      ? JSON.stringify({ accepted: true })
      : JSON.stringify({ accepted: false, ...(event.rule ? { rule: event.rule } : {}), ...(event.message ? { message: event.message } : {}) });
    const result = {
      type: EventType.TOOL_CALL_RESULT,
      messageId: `${this.runId}:result:${++this.results}`,
      toolCallId: event.callId,
      role: 'tool',
      content,
    } as BaseEvent;
    if (event.accepted && event.tool === 'run_worker' && agent === 'manager') this.heldResults.push(result);
    else this.emit(result);
  }

  /**
   * The assistant message of an agent's current round while the run lasts. Not one of the
   * snapshot's ids on purpose: MESSAGES_SNAPSHOT then replaces every live message, and the
   * client's list ends in the conversation's own order.
   */
  private liveMessageId(agent: 'manager' | 'worker'): string {
    return `${this.runId}:${agent}:round-${this.rounds[agent]}`;
  }

  private releaseHeld(): void {
    for (const result of this.heldResults.splice(0)) this.emit(result);
  }

  /** What changed in the view since the last snapshot or delta, as JSON Patch (RFC 6902). */
  private delta(): void {
    const next = stateOf(this.view());
    const patch = jsonPatch.compare(this.state, next);
    this.state = next;
    if (patch.length > 0) this.emit({ type: EventType.STATE_DELTA, delta: patch } as BaseEvent);
  }
}
