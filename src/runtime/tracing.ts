/**
 * OpenTelemetry traces of a session, made by a listener of the chart's live events (the
 * events its actions emit, session.reports.ts) — never by reading its state. Spans follow the
 * GenAI semantic conventions where one exists:
 *
 *   invoke_workflow {package}      a session's work from a person's decision to the next wait (or the end)
 *   ├── steward.decision {wait}    the decision that started it: who, which event, the edits, the wait's length
 *   └── invoke_agent {agent}       the manager's or one worker's turn (gen_ai.agent.name)
 *       ├── chat {model}           each model call: usage, outcome
 *       └── execute_tool {tool}    each call checked, with the rule that refused it, if any;
 *                                  an MCP tool call that runs is one too, from its start to its result
 *   steward.decision {wait}        each decision on an MCP tool call, in approve_tool, tool_input or tool_interrupted (who, which decision, edited)
 *
 * Every span carries `gen_ai.conversation.id` = the session id. Only `@opentelemetry/api` is
 * used: the app registers (or passes) a TracerProvider with its SDK and exporter. Without the
 * runtime's `tracerProvider` option no listener is attached, so tracing off costs nothing.
 */
import { context as contextApi, SpanKind, SpanStatusCode, trace, type Attributes, type Span, type Tracer } from '@opentelemetry/api';
import type { SessionStreamEvent, StreamEventOf } from '../core/machines/stream-events.js';
import type { UserEventType } from '../core/machines/session.events.js';

/** The user event each decision on an MCP tool call was. */
const TOOL_DECISION_EVENTS: Readonly<Record<StreamEventOf<'tool_call_decided'>['decision'], UserEventType>> = {
  approved: 'user_approved_tool_call',
  rejected: 'user_rejected_tool_call',
  answered: 'user_answered_tool_input',
  result_given: 'user_gave_tool_result',
};

/** The instrumentation scope of Steward's spans. */
export const TRACER_NAME = 'steward';

/** What the spans say of the model: its name (`gen_ai.request.model`) and provider (`gen_ai.provider.name`). */
export interface TracedModel {
  name: string;
  provider: string;
}

/**
 * The spans of one session, fed its live events in order (`listener`).
 *
 * @example
 * const tracer = new SessionTracer(provider.getTracer('steward'), session.id, 'short-story', { name: 'gpt-4o-mini', provider: 'openai' });
 * session.subscribe(tracer.listener, { textDeltas: false });
 */
export class SessionTracer {
  private workflow: Span | null = null;
  /**
   * The open `invoke_agent` spans and their model calls in flight, by agent (`manager`, or
   * `worker:<id>`): the workers of a fan-out run at once, each under its own span.
   */
  private readonly agents = new Map<string, Span>();
  private readonly chats = new Map<string, Span>();
  /** The agent whose round replied last: the reply's tool calls are checked (and run) under it. */
  private current: string | null = null;
  /** The MCP tool call under way, by call id (one at a time: the chart runs them in order). */
  private calling: { callId: string; span: Span } | null = null;
  /** When the current wait began, as this process saw it (the subscribe time for a session that was waiting already). */
  private waitingSince = Date.now();

  constructor(
    private readonly tracer: Tracer,
    private readonly sessionId: string,
    private readonly packageId: string | null,
    private readonly model: TracedModel,
  ) {}

  readonly listener = (event: SessionStreamEvent): void => {
    switch (event.type) {
      case 'decision':
        return this.decided(event);
      case 'user_event_refused':
        return this.refused(event);
      case 'round_started':
        return this.roundStarted(event);
      case 'round_finished':
        return this.roundFinished(event);
      case 'tool_call_checked':
        return this.toolChecked(event);
      case 'tool_call_decided':
        return this.toolDecided(event);
      case 'tool_call_started':
        return this.toolStarted(event);
      case 'tool_call_finished':
        return this.toolFinished(event);
      case 'waiting':
        this.waitingSince = event.at;
        return this.endWorkflow();
      case 'done':
        return this.endWorkflow();
      case 'stopped':
        return this.endWorkflow(event.reason === 'failed' ? (event.error ?? 'failed') : undefined);
      default:
        return undefined;
    }
  };

  private base(operation: string): Attributes {
    return { 'gen_ai.operation.name': operation, 'gen_ai.conversation.id': this.sessionId };
  }

  private under(parent: Span | null) {
    return parent ? trace.setSpan(rootContext(), parent) : rootContext();
  }

  /** The workflow under way, opened when an event arrives without one (a session resumed while it ran). */
  private openWorkflow(at: number): Span {
    this.workflow ??= this.tracer.startSpan(
      `invoke_workflow${this.packageId ? ` ${this.packageId}` : ''}`,
      {
        kind: SpanKind.INTERNAL,
        startTime: at,
        attributes: { ...this.base('invoke_workflow'), ...(this.packageId ? { 'gen_ai.workflow.name': this.packageId } : {}) },
      },
      rootContext(),
    );
    return this.workflow;
  }

  private decided(event: StreamEventOf<'decision'>): void {
    this.endWorkflow();
    const workflow = this.openWorkflow(event.at);
    const span = this.tracer.startSpan(
      `steward.decision ${event.reason}`,
      { kind: SpanKind.INTERNAL, startTime: event.at, attributes: this.decisionAttributes(event.reason, event.eventType, event.by, event.edits) },
      this.under(workflow),
    );
    if (event.approvalRequiredBy) span.setAttribute('steward.approval.required_by', event.approvalRequiredBy);
    span.end(event.at);
  }

  private decisionAttributes(reason: string, eventType: string, by: string | null, edits: readonly string[]): Attributes {
    return {
      'gen_ai.conversation.id': this.sessionId,
      'steward.decision.wait': reason,
      'steward.decision.event': eventType,
      'steward.decision.by': by ?? 'unknown',
      'steward.decision.edits': [...edits],
      'steward.decision.wait_ms': Math.max(0, Date.now() - this.waitingSince),
    };
  }

  /** A refused user event is a decision too: it changed nothing, and the session still waits. */
  private refused(event: StreamEventOf<'user_event_refused'>): void {
    const span = this.tracer.startSpan(
      'steward.decision refused',
      {
        kind: SpanKind.INTERNAL,
        startTime: event.at,
        attributes: { 'gen_ai.conversation.id': this.sessionId, 'steward.decision.event': event.eventType, 'steward.decision.refused': event.reason },
      },
      rootContext(),
    );
    span.end(event.at);
  }

  private roundStarted(event: StreamEventOf<'round_started'>): void {
    const name = agentName(event);
    const key = `${event.agent}:${name}`;
    if (!this.agents.has(key)) {
      // An agent with no model call in flight is done: the next one takes over (a fan-out's workers overlap).
      for (const [open, span] of this.agents) {
        if (this.chats.has(open)) continue;
        span.end(event.at);
        this.agents.delete(open);
      }
      const workflow = this.openWorkflow(event.at);
      const span = this.tracer.startSpan(
        `invoke_agent ${name}`,
        { kind: SpanKind.INTERNAL, startTime: event.at, attributes: { ...this.base('invoke_agent'), 'gen_ai.agent.name': name } },
        this.under(workflow),
      );
      this.agents.set(key, span);
    }
    this.current = key;
    this.chats.get(key)?.end(event.at);
    const chat = this.tracer.startSpan(
      `chat ${this.model.name}`,
      {
        kind: SpanKind.CLIENT,
        startTime: event.at,
        attributes: {
          ...this.base('chat'),
          'gen_ai.provider.name': this.model.provider,
          'gen_ai.request.model': this.model.name,
          'steward.round': event.round,
          'steward.burst': event.burst,
        },
      },
      this.under(this.agents.get(key)!),
    );
    this.chats.set(key, chat);
  }

  private roundFinished(event: StreamEventOf<'round_finished'>): void {
    const key = `${event.agent}:${agentName(event)}`;
    this.current = key;
    const span = this.chats.get(key);
    if (!span) return;
    this.chats.delete(key);
    if (event.usage) {
      span.setAttribute('gen_ai.usage.input_tokens', event.usage.promptTokens);
      span.setAttribute('gen_ai.usage.output_tokens', event.usage.completionTokens);
    }
    span.setAttribute('steward.round.outcome', event.outcome);
    if (event.outcome === 'failed') {
      span.setAttribute('error.type', '_OTHER');
      span.setStatus({ code: SpanStatusCode.ERROR, message: event.error ?? 'failed' });
    }
    span.end(event.at);
  }

  private toolChecked(event: StreamEventOf<'tool_call_checked'>): void {
    const parent = this.currentAgent() ?? this.openWorkflow(event.at);
    const span = this.tracer.startSpan(
      `execute_tool ${event.tool}`,
      {
        kind: SpanKind.INTERNAL,
        startTime: event.at,
        attributes: {
          ...this.base('execute_tool'),
          'gen_ai.tool.name': event.tool,
          'gen_ai.tool.call.id': event.callId,
          'gen_ai.tool.type': 'function',
          'steward.tool.accepted': event.accepted,
          ...(event.rule ? { 'steward.tool.refused_by': event.rule } : {}),
        },
      },
      this.under(parent),
    );
    span.end(event.at);
  }

  /** A person's decision on one MCP tool call (in approve_tool, tool_input or tool_interrupted): a decision span of its own (the wait may stay open for the others). */
  private toolDecided(event: StreamEventOf<'tool_call_decided'>): void {
    const span = this.tracer.startSpan(
      `steward.decision ${event.reason}`,
      {
        kind: SpanKind.INTERNAL,
        startTime: event.at,
        attributes: {
          ...this.decisionAttributes(event.reason, TOOL_DECISION_EVENTS[event.decision], event.by, event.edited ? ['arguments'] : []),
          'gen_ai.tool.name': `${event.server}.${event.tool}`,
          'gen_ai.tool.call.id': event.callId,
          'steward.decision.wait_number': event.wait,
        },
      },
      this.under(this.workflow),
    );
    span.end(event.at);
  }

  /** An approved MCP tool call starts: `execute_tool` until its result (GenAI conventions; `mcp.method.name` as MCP's). */
  private toolStarted(event: StreamEventOf<'tool_call_started'>): void {
    this.calling?.span.end(event.at);
    const parent = this.currentAgent() ?? this.openWorkflow(event.at);
    const span = this.tracer.startSpan(
      `execute_tool ${event.server}.${event.tool}`,
      {
        kind: SpanKind.CLIENT,
        startTime: event.at,
        attributes: {
          ...this.base('execute_tool'),
          'gen_ai.tool.name': `${event.server}.${event.tool}`,
          'gen_ai.tool.call.id': event.callId,
          'gen_ai.tool.type': 'extension',
          'mcp.method.name': 'tools/call',
        },
      },
      this.under(parent),
    );
    this.calling = { callId: event.callId, span };
  }

  private toolFinished(event: StreamEventOf<'tool_call_finished'>): void {
    const open = this.calling;
    if (!open || open.callId !== event.callId) return;
    this.calling = null;
    open.span.setAttribute('steward.tool.outcome', event.outcome);
    if (event.outcome === 'failed' || event.isError) {
      open.span.setAttribute('error.type', event.outcome === 'failed' ? 'tool_call_failed' : 'tool_error');
      open.span.setStatus({ code: SpanStatusCode.ERROR, message: event.outcome });
    }
    open.span.end(event.at);
  }

  private currentAgent(): Span | undefined {
    return this.current === null ? undefined : this.agents.get(this.current);
  }

  private endAgents(at: number): void {
    for (const chat of this.chats.values()) chat.end(at);
    this.chats.clear();
    for (const agent of this.agents.values()) agent.end(at);
    this.agents.clear();
    this.current = null;
  }

  private endWorkflow(error?: string): void {
    const at = Date.now();
    this.calling?.span.end(at);
    this.calling = null;
    this.endAgents(at);
    if (!this.workflow) return;
    if (error !== undefined) this.workflow.setStatus({ code: SpanStatusCode.ERROR, message: error });
    this.workflow.end(at);
    this.workflow = null;
  }
}

/** The agent a round is of: the manager, or the worker (a fan-out's rounds name theirs). */
const agentName = (event: { agent: string; workerId: string | null }) => (event.agent === 'manager' ? 'manager' : (event.workerId ?? 'worker'));

/** A context with no active span: each workflow is the root of its own trace. */
function rootContext() {
  return trace.deleteSpan(contextApi.active());
}
