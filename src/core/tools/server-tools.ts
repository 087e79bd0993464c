/**
 * Tools from MCP servers, as the chart knows them: plain data, no I/O. A worker's front matter
 * names the tools it may call (`tools: ["files.read_file", "files.*"]`); its turn offers them
 * to the model, pinned (the definition the session saw first), and says for each call of the
 * reply whether it runs at once or waits for a person, and whether its arguments match the
 * tool's input schema (validated with the MCP SDK's validator, outside the core). The chart
 * turns the calls that pass the rules into items (`ToolCallItem`) a person decides and the
 * `toolCall` actor runs, one at a time, in the order the model gave them.
 */

/** MCP's tool annotations: hints from the server, believed only of a trusted server. */
export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/** A server's tool as the session pinned it: what the model was shown, and what an approval binds to. */
export interface PinnedTool {
  server: string;
  /** The tool's name on its server. */
  name: string;
  /** The function name the model calls: `<server>__<tool>`, made safe for every model API. */
  modelName: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  annotations?: ToolAnnotations;
  /** sha256 of the definition (server, name, description, schemas, annotations): a changed tool has another. */
  digest: string;
}

/**
 * Who decided whether a call waits for a person: the deployment (`createRuntime({ toolApproval })`),
 * the manifest (`approval` of the server or the tool), the tool's `readOnlyHint` (runs at once),
 * or the safe default (every tool not marked read-only, and every tool of an untrusted server, waits).
 */
export type ToolApprovalSource = 'deployment' | 'manifest' | 'read_only' | 'default' | 'untrusted_server';

/** The worker turn's verdict on one server-tool call of its reply (by the call's id, as the reply is queued). */
export interface ToolCallVerdict {
  callId: string;
  server: string;
  tool: string;
  /** Whether a person decides before the call runs. */
  asks: boolean;
  /** Why it asks or not. */
  approvalBy: ToolApprovalSource;
  /** Set when the arguments do not match the tool's input schema: the message the model gets. */
  argumentsError?: string;
}

/** What the worker's turn adds to its output for server tools. */
export interface TurnTools {
  /** Definitions seen for the first time in this session: the chart pins them. */
  pinned: PinnedTool[];
  verdicts: ToolCallVerdict[];
}

/**
 * One question a server asked a person during a call (MCP elicitation), by the key the server
 * gave it: a form (`requestedSchema`, a flat object of strings, numbers, booleans and enums) or
 * a page to visit (`url`, e.g. to sign in), with the server's message.
 */
export type ToolInputRequest =
  | { key: string; mode: 'form'; message: string; requestedSchema: Record<string, unknown> }
  | { key: string; mode: 'url'; message: string; url: string; elicitationId?: string };

/** A person's answer to one request: accept (a form's content; for a URL, done), decline or cancel. */
export interface ToolInputResponse {
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, string | number | boolean | string[]>;
}

/**
 * What a server asked during a call, and how it is answered. On a server of the 2026-07-28
 * protocol the call ended with `input_required`: `requestState` (opaque, the server's) goes back
 * with the answers when the call is made again, by any process holding the session. On an older
 * server the question came on the live connection (`live`): only the process holding that
 * connection can answer it, and a call whose process died is interrupted.
 */
export interface ToolCallInputRequest {
  requests: ToolInputRequest[];
  requestState?: string;
  live?: boolean;
  /** The person's answers, by request key: the call is made again (or, live, goes on) with them. */
  responses?: Record<string, ToolInputResponse>;
}

/**
 * One server-tool call of the worker's latest reply, from checked to done:
 * - `pending`: waits for a person (approve_tool);
 * - `approved`: runs when its turn comes, with `arguments` (the model's, or a person's edit);
 * - `asking`: the server asked a person for input during the call (tool_input); answered, it
 *   is approved again and the call goes on with the answers;
 * - `interrupted`: the process running it stopped mid-call, so it may or may not have taken
 *   effect (tool_interrupted): a person runs it again, skips it or gives its result;
 * - `rejected`: never runs (or, interrupted, is not run again); the model gets `reason` as the tool's result;
 * - `done`: ran (or failed): the model got its result.
 */
export interface ToolCallItem {
  callId: string;
  server: string;
  tool: string;
  arguments: Record<string, unknown>;
  /** The pinned definition the decision is bound to: a call whose tool now differs does not run. */
  digest: string;
  status: 'pending' | 'approved' | 'asking' | 'interrupted' | 'rejected' | 'done';
  approvalBy: ToolApprovalSource;
  /** Who decided, whether they edited the arguments, why they rejected. */
  decidedBy?: string;
  edited?: boolean;
  reason?: string;
  /** The tool's definition changed on its server after the call was approved: what it was and is now (the call waits again). */
  changed?: { before: PinnedTool; after: PinnedTool };
  /** What the server asked a person during the call, and their answers (the latest question only). */
  input?: ToolCallInputRequest;
  /** A person gave the result of an interrupted call by hand (`decidedBy`: who). */
  resultGiven?: boolean;
}

/**
 * The waits about a worker's MCP calls, each with the status of the calls it is about (the one
 * table the chart's updates, the view, the protocols and the CLI read): undecided calls in
 * approve_tool, the call whose server asks in tool_input, the call cut off in tool_interrupted.
 */
export const TOOL_WAIT_STATUS = {
  approve_tool: 'pending',
  tool_input: 'asking',
  tool_interrupted: 'interrupted',
} as const satisfies Record<string, ToolCallItem['status']>;

export type ToolWait = keyof typeof TOOL_WAIT_STATUS;

/** Whether a waiting reason is one of the tool waits. */
export const isToolWait = (reason: string | undefined): reason is ToolWait => reason !== undefined && Object.hasOwn(TOOL_WAIT_STATUS, reason);

/** The calls the wait `reason` is about, in the model's order (none for another wait). */
export function callsOfWait<C extends Pick<ToolCallItem, 'status'>>(calls: readonly C[] | undefined, reason: string | undefined): C[] {
  return isToolWait(reason) ? (calls ?? []).filter((c) => c.status === TOOL_WAIT_STATUS[reason]) : [];
}

/**
 * What the `toolCall` actor resolves with: the server answered (its result for the model), the
 * call could not be made or broke off (a timeout, a crash, garbage: what went wrong, for the
 * model), the tool changed since it was approved and the call did not run, the server asks a
 * person for input before it goes on, or the call was under way when its process stopped and
 * is not repeated without a person.
 */
export type ToolCallOutput =
  | { callId: string; outcome: 'result'; text: string; isError: boolean; truncated?: boolean; durationMs?: number }
  | { callId: string; outcome: 'failed'; error: string; durationMs?: number }
  | { callId: string; outcome: 'definition_changed'; definition: PinnedTool }
  | { callId: string; outcome: 'input_required'; requests: ToolInputRequest[]; requestState?: string; live?: boolean; durationMs?: number }
  | { callId: string; outcome: 'interrupted' };

/** What the `toolCall` actor is given: the call to run and the definition it was approved for. */
export interface ToolCallInput {
  sessionId: string;
  /** The session's package (its manifest declares the call's server) and the version it is pinned to. */
  packageId: string;
  packageVersion?: string;
  /** The session's values for its servers' `${VAR}` (its package's `toolVariables`). */
  variables?: Readonly<Record<string, string>>;
  item: ToolCallItem;
  pinned: PinnedTool;
}

const MODEL_NAME_MAX = 64;

/**
 * The function name a model calls for `server`'s `tool`: `<server>__<tool>`, with every
 * character a model API refuses (OpenAI takes [A-Za-z0-9_-], at most 64) made `_`. Names that
 * collide after that are told apart by the caller (`modelNames`).
 */
export function modelNameOf(server: string, tool: string): string {
  return `${server}__${tool}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, MODEL_NAME_MAX);
}

/** Whether a front matter entry (`server.tool` or `server.*`) allows `server`'s `tool`. */
export function toolPatternAllows(pattern: string, server: string, tool: string): boolean {
  const dot = pattern.indexOf('.');
  if (dot <= 0) return false;
  const [patternServer, patternTool] = [pattern.slice(0, dot), pattern.slice(dot + 1)];
  return patternServer === server && (patternTool === '*' || patternTool === tool);
}

/** The pinned definition of `server`'s `tool`. */
export function pinnedTool(pins: readonly PinnedTool[] | undefined, server: string, tool: string): PinnedTool | undefined {
  return pins?.find((p) => p.server === server && p.name === tool);
}
