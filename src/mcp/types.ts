/**
 * The tool host's API types: what it is given (a server by name and configuration) and what it
 * hands back (tool definitions, call outcomes). Plain data, JSON all through: a definition or
 * an outcome may be stored, journalled and compared by digest.
 */
import type { InputRequests, InputResponses, ToolAnnotations } from '@modelcontextprotocol/client';
import type { McpServerConfig } from '../core/skills/mcp-servers.js';
import type { Environment } from './expand-variables.js';

export type { InputRequests, InputResponses, ToolAnnotations };

/** A server as a package declares it: its name in `mcpServers` and its entry there. */
export interface ServerRef {
  name: string;
  config: McpServerConfig;
  /**
   * Values for `${VAR}` over the host's environment, for this use only (a session's own folder):
   * a server started with other values is another server.
   */
  variables?: Environment;
}

/** A JSON Schema object (a tool's input or output schema), as the server sent it. */
export type JsonSchemaObject = Record<string, unknown>;

/** One tool of a server, as a model is shown it. */
export interface ToolDefinition {
  /** The server's name (`ServerRef.name`): the tool's reference is `server.name`. */
  server: string;
  name: string;
  title?: string;
  /** Cut at `limits.descriptionChars`. */
  description?: string;
  inputSchema: JsonSchemaObject;
  outputSchema?: JsonSchemaObject;
  /** Left out when the server is not `trusted`: its hints are not to be believed. */
  annotations?: ToolAnnotations;
  /** sha256 (hex) of the canonical JSON of every other field: a changed tool has a new digest. */
  digest: string;
}

/** Why a call failed; the message says it to the model and names the fix. */
export type ToolFailureReason =
  | 'timeout'
  | 'cancelled'
  /** The server process stopped, or its connection closed, during the call. */
  | 'server_stopped'
  /** The server could not be started or reached (or waits before its next restart). */
  | 'server_unavailable'
  /** A `${VAR}` of its configuration is not set. */
  | 'configuration'
  | 'unknown_tool'
  | 'invalid_arguments'
  /** The server answered the call with a JSON-RPC error. */
  | 'server_error'
  /** The answer was over `limits.messageBytes`. */
  | 'too_large'
  /** The server answered something that is not MCP. */
  | 'protocol_error'
  /** The host was closed. */
  | 'host_closed'
  /**
   * Answers came for a question asked on the live connection, but none is held under the
   * call's `heldKey` (the process restarted, the connection was lost, the question was
   * cancelled): the call may or may not have taken effect, and was not made again.
   */
  | 'live_input_lost';

/** What a call came to. Never thrown: a failure is an outcome the model reads. */
export type ToolCallOutcome =
  | {
      kind: 'result';
      /** The content as text for a model: text parts as they are, other parts described. */
      text: string;
      /** The tool itself reported an error (`isError`): the model reads it and may try again. */
      isError: boolean;
      /** The text was cut at `limits.resultChars` (and says so). */
      truncated: boolean;
      durationMs: number;
    }
  | { kind: 'failed'; error: { reason: ToolFailureReason; message: string }; durationMs: number }
  | {
      kind: 'input_required';
      /** The server's requests as it sent them (elicitation: a form or a URL), by its keys. */
      requests: InputRequests;
      /** Opaque: pass it back unchanged with the answers. */
      requestState?: string;
      /**
       * The server asked on the live connection (a revision before 2026-07-28) and waits inside
       * the call: the question is held under the request's `heldKey` until the call is made
       * again with `answersHeld` and the answers, by the same host (one request, key `input`).
       */
      live?: true;
      durationMs: number;
    };

export interface CallToolRequest {
  server: ServerRef;
  tool: string;
  arguments: Record<string, unknown>;
  signal?: AbortSignal;
  /** The answers to an `input_required` outcome's requests, by the same keys. */
  inputResponses?: InputResponses;
  /** The `requestState` of that outcome, unchanged. */
  requestState?: string;
  /**
   * The caller's name for this call, one it can give again (e.g. its session and call id): a
   * question the server asks on the live connection during the call is held under it. Without
   * one, such a question is declined.
   */
  heldKey?: string;
  /**
   * The `inputResponses` answer the question held under `heldKey` (an `input_required` outcome
   * with `live`): the call under way goes on with them and is not made again.
   */
  answersHeld?: boolean;
}

export interface ToolHostLimits {
  /** Tools one server may list; more is an McpToolLimitError (default 128). */
  maxTools: number;
  /** Characters of a call's text for the model (default 64,000). */
  resultChars: number;
  /** Characters of a tool's description (default 2,000); a title gets 200. */
  descriptionChars: number;
  /** Characters of a tool's input and output schemas, as canonical JSON (default 32,000). */
  schemaChars: number;
  /** Bytes of one message from a server (default 4 MB): a longer one fails the call. */
  messageBytes: number;
  /** Characters of one line of a local server's stderr in the log (default 2,000). */
  logLineChars: number;
  /**
   * Questions asked on a live connection (servers before 2026-07-28) held for people at once
   * (default 256): each keeps a call open. Past it the oldest is cancelled.
   */
  heldQuestions: number;
}

export interface ToolHostOptions {
  /** Where `${VAR}` is read from, and PATH for local servers (default `process.env`). */
  env?: Environment;
  /** Lines for the operator: local servers' stderr, declined elicitations, protocol noise. Safe for a terminal. */
  log?: (line: string) => void;
  limits?: Partial<ToolHostLimits>;
  /** A call's time limit when the server sets no `timeoutMs` (default 60,000). */
  timeoutMs?: number;
  /** How long a server may take to start and list its tools, at least (default 30,000; a call's limit when that is longer). */
  startTimeoutMs?: number;
  /**
   * After a local server stopped unexpectedly it restarts on the next use; if it stops again
   * before a call succeeded, the next start waits `initialMs`, then twice as long each time, up
   * to `maxMs` (defaults 1,000 and 60,000). Uses in the meantime fail at once, saying when.
   */
  restartBackoff?: { initialMs?: number; maxMs?: number };
}
