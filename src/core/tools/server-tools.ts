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
 * One server-tool call of the worker's latest reply, from checked to done:
 * - `pending`: waits for a person (approve_tool);
 * - `approved`: runs when its turn comes, with `arguments` (the model's, or a person's edit);
 * - `rejected`: never runs; the model gets `reason` as the tool's result;
 * - `done`: ran (or failed): the model got its result.
 */
export interface ToolCallItem {
  callId: string;
  server: string;
  tool: string;
  arguments: Record<string, unknown>;
  /** The pinned definition the decision is bound to: a call whose tool now differs does not run. */
  digest: string;
  status: 'pending' | 'approved' | 'rejected' | 'done';
  approvalBy: ToolApprovalSource;
  /** Who decided, whether they edited the arguments, why they rejected. */
  decidedBy?: string;
  edited?: boolean;
  reason?: string;
  /** The tool's definition changed on its server after the call was approved: what it was and is now (the call waits again). */
  changed?: { before: PinnedTool; after: PinnedTool };
}

/**
 * What the `toolCall` actor resolves with: the server answered (its result for the model), the
 * call could not be made or broke off (a timeout, a crash, garbage: what went wrong, for the
 * model), or the tool changed since it was approved and the call did not run.
 */
export type ToolCallOutput =
  | { callId: string; outcome: 'result'; text: string; isError: boolean; truncated?: boolean; durationMs?: number }
  | { callId: string; outcome: 'failed'; error: string; durationMs?: number }
  | { callId: string; outcome: 'definition_changed'; definition: PinnedTool };

/** What the `toolCall` actor is given: the call to run and the definition it was approved for. */
export interface ToolCallInput {
  sessionId: string;
  /** The session's package (its manifest declares the call's server) and the version it is pinned to. */
  packageId: string;
  packageVersion?: string;
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
