/**
 * The MCP tool host: Steward's workers' tools from MCP servers, through the official SDK.
 * It knows nothing of sessions or the chart: given a server (its name and configuration) it
 * lists the server's tools and calls them, and it owns the servers' lives.
 *
 * - One connection per identical (name, configuration), shared by every caller; a local
 *   server starts when first needed, and stops with `close()`.
 * - A server that stops unexpectedly restarts on the next use. If it stops again before a call
 *   succeeded, the next start waits (doubling, bounded): uses meanwhile fail at once, saying
 *   when, so a crashing server is not restarted in a loop.
 * - `${VAR}`s are expanded at each start from `options.env`; their values are hidden in every
 *   error, log line and outcome. A local server gets its declared env and PATH only.
 * - Bounded everywhere: tools per server, schema and description sizes, a message's bytes,
 *   the text of a result, a log line; and every call has a time limit.
 * - `input_required` (a 2026-07-28 server asks for input) is an outcome, answered by calling
 *   again with `inputResponses` and the `requestState`. A server of an earlier revision asks on
 *   the live connection (`elicitation/create`) while its call waits: the question is held under
 *   the caller's `heldKey` and is an `input_required` outcome marked `live`; the caller's next
 *   call with `answersHeld` answers it and gets the call's outcome (held-calls.ts).
 */
import { SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import { canonicalJson } from '../core/text/canonical-json.js';
import { safeLine } from '../text/safe-text.js';
import type { Outcome } from './call-tool.js';
import { CallUnderWay } from './call-under-way.js';
import { Connection } from './connection.js';
import { McpServerError, McpToolLimitError, McpVariableError } from './errors.js';
import { expandServer } from './expand-variables.js';
import { HeldCalls } from './held-calls.js';
import { cut } from './tool-definitions.js';
import type { CallToolRequest, ServerRef, ToolCallOutcome, ToolDefinition, ToolHostLimits, ToolHostOptions } from './types.js';
import { createArgumentValidator } from './validate-arguments.js';
import { untilAborted } from '../core/until-aborted.js';

export const DEFAULT_TOOL_HOST_LIMITS: Readonly<ToolHostLimits> = Object.freeze({
  maxTools: 128,
  resultChars: 64_000,
  descriptionChars: 2_000,
  schemaChars: 32_000,
  // Below the SDK's 10 MB: its stdio reader copies its buffer on each chunk, so reading a
  // message costs time that grows with the square of its size, on Steward's event loop.
  messageBytes: 4 * 1024 * 1024,
  logLineChars: 2_000,
  heldQuestions: 256,
});

const DEFAULT_TIMEOUT_MS = 60_000;
const DEFAULT_START_TIMEOUT_MS = 30_000;

export interface ToolHost {
  /**
   * The server's tools; starts or reaches it when needed. Listed once per connection, unless
   * `fresh` (as the server says now: what a call about to run is checked against).
   * Throws McpServerError, McpVariableError, McpToolLimitError.
   */
  listTools(server: ServerRef, options?: { fresh?: boolean }): Promise<ToolDefinition[]>;
  /** null when `args` match the tool's input schema, else what is wrong (for the model or a person). */
  validateArguments(definition: ToolDefinition, args: unknown): string | null;
  /**
   * Calls a tool; never throws. With `answersHeld`, answers the question held under `heldKey`
   * instead, and no call is made (`live_input_lost` when nothing is held there).
   */
  callTool(request: CallToolRequest): Promise<ToolCallOutcome>;
  /** Answers every question held `cancel`, stops every server and waits until each local one is gone. Idempotent. */
  close(): Promise<void>;
}

/** A server's live (or starting) connection, and how to hide its secrets. */
interface Entry {
  connection: Promise<Connection>;
  hide: (text: string) => string;
}

/**
 * A tool host. Close it when done: its local servers are its child processes.
 *
 * @example
 * const host = createToolHost({ log: (line) => console.error(line) });
 * const server = { name: 'files', config: { command: 'node', args: ['server.js'], trusted: true } };
 * const [tool] = await host.listTools(server);
 * const outcome = await host.callTool({ server, tool: tool.name, arguments: { path: 'README.md' } });
 * if (outcome.kind === 'result') console.log(outcome.text);
 * await host.close();
 */
export function createToolHost(options: ToolHostOptions = {}): ToolHost {
  const env = options.env ?? process.env;
  const limits: ToolHostLimits = { ...DEFAULT_TOOL_HOST_LIMITS, ...options.limits };
  const backoff = { initialMs: 1_000, maxMs: 60_000, ...options.restartBackoff };
  const validate = createArgumentValidator();
  const live = new Map<string, Entry>();
  /** Unexpected stops (or failed starts) of a server since its last successful call. */
  const stops = new Map<string, { count: number; at: number }>();
  /** Connections that stopped on their own, while what is left of them is stopped. */
  const stopping = new Set<Promise<void>>();
  let closing: Promise<void> | null = null;

  const keyOf = (ref: ServerRef) => canonicalJson([ref.name, ref.config, ref.variables ?? {}]);
  const timeoutOf = (ref: ServerRef) => ref.config.timeoutMs ?? options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const logFor = (name: string, hide: (text: string) => string) => (line: string) =>
    options.log?.(safeLine(cut(hide(`MCP server "${name}": ${line}`), limits.logLineChars + 200)));
  /** Calls whose server asked a person on the live connection, held for the answer. */
  const held = new HeldCalls({
    limit: limits.heldQuestions,
    onResult: (ref) => stops.delete(keyOf(ref)),
    closing: () => closing !== null,
    log: (followed, line) => logFor(followed.ref.name, followed.hide)(line),
  });

  const stopped = (key: string) => {
    const previous = stops.get(key);
    stops.set(key, { count: (previous?.count ?? 0) + 1, at: Date.now() });
  };

  /** Milliseconds until the server may start again: the first restart is at once, each next waits twice as long. */
  const restartWait = (key: string): number => {
    const record = stops.get(key);
    if (!record || record.count < 2) return 0;
    const delay = Math.min(backoff.initialMs * 2 ** (record.count - 2), backoff.maxMs);
    return record.at + delay - Date.now();
  };

  /** The server's connection, started when there is none. Throws the host's typed errors. */
  const entryFor = (ref: ServerRef): Entry => {
    if (closing) throw new McpServerError(ref.name, 'host_closed', `The tool host was closed: MCP server "${ref.name}" is not started again.`);
    const key = keyOf(ref);
    const existing = live.get(key);
    if (existing) return existing;
    const wait = restartWait(key);
    if (wait > 0) {
      const count = stops.get(key)?.count ?? 0;
      throw new McpServerError(
        ref.name,
        'backoff',
        `MCP server "${ref.name}" stopped ${count} times in a row; it is started again on a use in ${Math.ceil(wait / 1000)} s. If it keeps stopping, check its log lines and mcpServers.${ref.name}.`,
      );
    }
    const expanded = expandServer(ref.name, ref.config, ref.variables ? { ...env, ...ref.variables } : env);
    const hide = expanded.secrets.hide;
    const connectionOptions = {
      server: ref.name,
      trusted: ref.config.trusted !== false,
      // Starting and listing get at least the start time limit: a process that starts slowly
      // (a busy machine, a first run of npx) is not a call that hangs.
      timeoutMs: Math.max(timeoutOf(ref), options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS),
      limits,
      path: env.PATH,
      log: logFor(ref.name, hide),
      hide,
    };
    // Once per connection: it stopped (or never started), so the next use starts another.
    let forgotten = false;
    const forget = (connection?: Connection) => {
      if (connection) {
        const done: Promise<void> = connection.close().finally(() => stopping.delete(done));
        stopping.add(done);
      }
      if (forgotten) return;
      forgotten = true;
      if (live.get(key) === entry) live.delete(key);
      stopped(key);
    };
    const entry: Entry = { hide, connection: Connection.open(expanded, connectionOptions, forget) };
    entry.connection.catch(() => forget());
    live.set(key, entry);
    return entry;
  };

  /** The server's tools (`fresh`: listed again, not as listed first), or the host's typed error (secrets hidden). */
  const toolsOf = async (ref: ServerRef, fresh = false) => {
    const entry = entryFor(ref);
    const connection = await entry.connection;
    try {
      return { connection, hide: entry.hide, tools: await connection.tools(fresh) };
    } catch (error) {
      throw listingError(ref, error, connection, entry.hide, timeoutOf(ref));
    }
  };

  const host: ToolHost = {
    async listTools(ref, options) {
      const { tools } = await toolsOf(ref, options?.fresh === true);
      return tools.map(({ definition }) => definition);
    },

    validateArguments: validate,

    async callTool(request) {
      const started = performance.now();
      const done = (outcome: Outcome): ToolCallOutcome => ({ ...outcome, durationMs: Math.round(performance.now() - started) }) as ToolCallOutcome;
      const ref = request.server;
      const name = `${ref.name}.${request.tool}`;
      // The call is under way already (its server asked on the live connection): it is not made again.
      if (request.answersHeld) return done(await held.answer(request, name));
      if (request.signal?.aborted) return done({ kind: 'failed', error: { reason: 'cancelled', message: `The call of ${name} was cancelled.` } });
      let found: Awaited<ReturnType<typeof toolsOf>>;
      try {
        found = await untilAborted(toolsOf(ref), request.signal);
      } catch (error) {
        if (request.signal?.aborted) return done({ kind: 'failed', error: { reason: 'cancelled', message: `The call of ${name} was cancelled.` } });
        return done({ kind: 'failed', error: failureOfServerError(error) });
      }
      const { connection, hide, tools } = found;
      const listed = tools.find(({ definition }) => definition.name === request.tool);
      if (!listed) {
        const names = tools.map(({ definition }) => definition.name);
        const message = `MCP server "${ref.name}" has no tool "${cut(request.tool, 200)}". Its tools: ${names.length ? names.join(', ') : '(none)'}.`;
        return done({ kind: 'failed', error: { reason: 'unknown_tool', message } });
      }
      const invalid = validate(listed.definition, request.arguments);
      if (invalid !== null) return done({ kind: 'failed', error: { reason: 'invalid_arguments', message: invalid } });
      const call = new CallUnderWay(connection, listed, request, {
        timeoutMs: timeoutOf(ref),
        resultChars: limits.resultChars,
        holdsQuestions: request.heldKey !== undefined,
      });
      return done(await held.follow({ call, ref, name, hide }, request));
    },

    close() {
      closing ??= (async () => {
        // Before the servers stop: each held question is answered, as a person who left would.
        held.cancelAll();
        const entries = [...live.values()];
        live.clear();
        await Promise.all([
          ...entries.map((entry) =>
            entry.connection.then(
              (c) => c.close(),
              () => {},
            ),
          ),
          ...stopping,
        ]);
      })();
      return closing;
    },
  };
  return host;
}

/** A listing's failure as the host's typed error: a limit as it is, the rest as McpServerError. */
function listingError(ref: ServerRef, error: unknown, connection: Connection, hide: (text: string) => string, timeoutMs: number): Error {
  if (McpToolLimitError.isInstance(error)) return error;
  if (connection.closedBecause === null && SdkError.isInstance(error) && error.code === SdkErrorCode.RequestTimeout)
    return new McpServerError(
      ref.name,
      'timeout',
      `MCP server "${ref.name}" did not list its tools within ${timeoutMs} ms. Check that it runs, or raise mcpServers.${ref.name}.timeoutMs.`,
    );
  if (connection.closedBecause !== null)
    return new McpServerError(
      ref.name,
      'closed',
      hide(`MCP server "${ref.name}" stopped while listing its tools (${connection.describeClose()}). It is started again on the next use.`),
    );
  const detail = error instanceof Error ? error.message : String(error);
  return new McpServerError(
    ref.name,
    'protocol_error',
    hide(`MCP server "${ref.name}" answered tools/list with something that is not a tool list: ${cut(detail, 2_000)}`),
  );
}

/** A typed error of the host as a failed call's error. */
function failureOfServerError(error: unknown): {
  reason: 'configuration' | 'server_unavailable' | 'server_stopped' | 'timeout' | 'protocol_error' | 'host_closed';
  message: string;
} {
  const message = error instanceof Error ? error.message : String(error);
  if (McpVariableError.isInstance(error)) return { reason: 'configuration', message };
  if (McpServerError.isInstance(error)) {
    const reason = (
      {
        start_failed: 'server_unavailable',
        backoff: 'server_unavailable',
        closed: 'server_stopped',
        timeout: 'timeout',
        protocol_error: 'protocol_error',
        host_closed: 'host_closed',
      } as const
    )[error.reason];
    return { reason, message };
  }
  if (McpToolLimitError.isInstance(error)) return { reason: 'protocol_error', message };
  return { reason: 'protocol_error', message: `The tool host failed: ${message}` };
}
