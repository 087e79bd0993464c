/**
 * The one interface every model implements. Messages use the OpenAI Chat Completions wire
 * shape, so a saved transcript can be sent to any OpenAI-compatible server as it is.
 */

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: ToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

export type AssistantMessage = Extract<ChatMessage, { role: 'assistant' }>;

/** A tool as the model sees it: name, description and a JSON Schema for its arguments. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
}

export interface ModelRequest {
  /** Who is speaking: lets demo and scripted models answer per agent. */
  agent: 'manager' | 'worker';
  messages: ChatMessage[];
  tools: ToolSpec[];
  signal?: AbortSignal;
  /**
   * Set when someone watches the reply as it is written (a `session.stream()` reader, say).
   * A model that can stream calls it with each piece of the reply's text, in order, and
   * still resolves with the whole reply; a model that cannot ignores it.
   */
  onTextDelta?: (text: string) => void;
  /**
   * Set with `onTextDelta`: a model that can stream calls it with each piece of a tool call as
   * it is written (the pieces of one `index` join to that call's `arguments`), and still
   * resolves with the whole reply.
   */
  onToolCallDelta?: (delta: ToolCallDelta) => void;
}

/** Where one model call streams its text and its tool calls: both, or (no one wants them) neither. */
export type DeltaSinks = Required<Pick<ModelRequest, 'onTextDelta' | 'onToolCallDelta'>>;

/** A piece of a tool call in flight: its place in the reply, its id and name once known, the next piece of its arguments. */
export interface ToolCallDelta {
  index: number;
  id?: string;
  name?: string;
  /** The next piece of the call's JSON arguments text (may be empty when the piece only names the call). */
  arguments: string;
}

export interface ModelReply {
  content: string | null;
  toolCalls: ToolCall[];
  usage?: TokenUsage;
}

export interface Model {
  /** Shown wherever model output is shown, e.g. "gpt-4.1-mini" or "demo model (no LLM)". */
  readonly label: string;
  complete(request: ModelRequest): Promise<ModelReply>;
}
