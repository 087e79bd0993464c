/**
 * The errors of the MCP tool host, beside the module as src/http's and src/cli's are: each
 * names the server, says what happened and the fix, and never holds a secret's value (a
 * variable is named, never shown). `callTool` throws none of them: its failures are outcomes
 * a model reads. `listTools` throws them.
 */
import { LimitExceededError, StewardError, UserError } from '../core/errors.js';

/** Why a server could not be used. */
export type McpServerFailure =
  /** The process could not be started, or the endpoint not reached, or the handshake failed. */
  | 'start_failed'
  /** The server stopped or the connection closed while it was being used. */
  | 'closed'
  /** The server did not answer within its time limit. */
  | 'timeout'
  /** It crashed again soon after a restart: the next start waits (no restart storm). */
  | 'backoff'
  /** The server answered something that is not MCP. */
  | 'protocol_error'
  /** The host was closed (`close()`). */
  | 'host_closed';

/**
 * An MCP server could not be started, reached or used. `reason` says which; `server` names it.
 *
 * @example
 * try {
 *   await host.listTools(server);
 * } catch (error) {
 *   if (McpServerError.isInstance(error) && error.reason === 'backoff') console.log(`${error.server} restarts later`);
 * }
 */
export class McpServerError extends StewardError {
  static override readonly errorName: string = 'McpServerError';
  constructor(
    readonly server: string,
    readonly reason: McpServerFailure,
    message: string,
    options?: { cause?: unknown },
  ) {
    super('mcp_server_failed', message, options);
  }
}

/**
 * A `${VAR}` of a server's configuration names a variable the environment does not have. The
 * message names the variable, the field and the server — never any variable's value.
 *
 * @example
 * if (McpVariableError.isInstance(error)) console.error(`set ${error.variable} for ${error.server}`);
 */
export class McpVariableError extends UserError {
  static override readonly errorName: string = 'McpVariableError';
  constructor(
    readonly server: string,
    readonly variable: string,
    /** Where it is used, e.g. "env.API_TOKEN" or "headers.Authorization". */
    readonly field: string,
  ) {
    super(
      `MCP server "${server}": its ${field} uses \${${variable}}, which is not set. Set ${variable} in the environment Steward runs in, or change mcpServers.${server}.${field} in the package's manifest.`,
    );
  }
}

/**
 * A server lists more tools than the host takes (`limits.maxTools`), or a tool whose input
 * schema is over `limits.schemaChars`: every tool's schema goes to the model on every turn.
 *
 * @example
 * if (McpToolLimitError.isInstance(error)) console.error(`${error.server}: ${error.actual} > ${error.max}`);
 */
export class McpToolLimitError extends LimitExceededError {
  static override readonly errorName: string = 'McpToolLimitError';
  constructor(
    readonly server: string,
    limit: 'maxTools' | 'schemaChars',
    max: number,
    actual: number,
    /** The tool at fault (schemaChars). */
    readonly tool?: string,
  ) {
    super(
      limit === 'maxTools'
        ? `MCP server "${server}" lists more than ${max} tools (limits.maxTools); none were taken. Use a server that offers fewer tools (many servers take an option to enable only some), or raise limits.maxTools of the tool host.`
        : `MCP server "${server}": the input schema of its tool "${tool ?? '?'}" has ${actual} characters, over ${max} (limits.schemaChars); its tools were not taken. Ask the server's author for a smaller schema, or raise limits.schemaChars of the tool host.`,
      `mcp.${limit}`,
      max,
      actual,
    );
  }
}
