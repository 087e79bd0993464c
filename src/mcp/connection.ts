/**
 * One live connection to one MCP server: the SDK's Client on the server's transport, the tools
 * it listed, and whether it is still open. The host keeps one per server (tool-host.ts) and
 * drops it when it closes; the next use starts a new one.
 *
 * The client declares elicitation (form and URL) and turns automatic fulfilment off, so a
 * 2026-07-28 server's `input_required` result comes back to the host, which hands it to the
 * session (a person answers; the call is made again with the answers). A server of an earlier
 * revision asks on the live connection instead (`elicitation/create`), while its call waits:
 * the question goes to the call under way on this connection, which holds it for a person
 * (call-under-way.ts). Nothing on the wire says which call a question belongs to, so when
 * several calls are under way (or none) it is declined, and that is logged.
 */
import { Client, SdkError, SdkErrorCode, type ElicitRequestParams, type ElicitResult } from '@modelcontextprotocol/client';
import { McpServerError } from './errors.js';
import type { ExpandedServer } from './expand-variables.js';
import { forwardLines } from './stderr-lines.js';
import { listServerTools, type ListedTool } from './tool-definitions.js';
import { createTransport } from './transports.js';
import type { ToolHostLimits } from './types.js';

export interface ConnectionOptions {
  server: string;
  trusted: boolean;
  timeoutMs: number;
  limits: ToolHostLimits;
  path: string | undefined;
  /** Logs a line about this server (the host hides secrets and makes it safe). */
  log: (line: string) => void;
  /** Hides the server's secrets in a text (the values of its `${VAR}`s). */
  hide: (text: string) => string;
}

/** A call under way on a connection: a question its server asks on the live connection may be its. */
export interface CallTakingQuestions {
  /**
   * The answer to `params` (a person's, in time), or why the call takes no question (it is
   * declined). `withdrawn` aborts when the server gives the question up or the connection closes.
   */
  ask(params: ElicitRequestParams, withdrawn: AbortSignal): Promise<ElicitResult> | { refused: string };
}

/** How long `close()` waits for a local server's process to be gone after the SDK stopped it. */
const EXIT_WAIT_MS = 5_000;

export class Connection {
  /** Why the connection closed, when it was not closed on purpose; null while open. */
  closedBecause: string | null = null;
  /**
   * Aborted when the connection is lost. Every request carries it: the SDK fails a request
   * when the transport tells it the connection closed, which the stdio transport does only
   * once the process is gone, seconds after it gave up on its output.
   */
  readonly lostSignal: AbortSignal;
  private readonly lostController = new AbortController();
  /** A local server's process id once connected: `close()` makes sure that process is gone. */
  private startedPid: number | null = null;
  private closed: Promise<void> | null = null;
  private listing: Promise<ListedTool[]> | null = null;
  /** The last error the transport reported (a line too long, output that is not MCP). */
  private lastTransportError: string | null = null;
  /** The calls under way, for a question the server asks on the live connection. */
  private readonly calls = new Set<CallTakingQuestions>();

  private constructor(
    readonly client: Client,
    private readonly pid: () => number | null,
    private readonly options: ConnectionOptions,
    /** Called once when the connection closes without `close()`. */
    private readonly onLost: (connection: Connection) => void,
  ) {
    this.lostSignal = this.lostController.signal;
  }

  /**
   * Starts (a local server) or reaches (a remote one) `expanded` and runs the handshake.
   *
   * @example
   * const connection = await Connection.open(expandServer('files', config, env), options, () => pool.delete(key));
   */
  static async open(expanded: ExpandedServer, options: ConnectionOptions, onLost: (connection: Connection) => void): Promise<Connection> {
    const client = new Client(
      { name: 'steward', version: '1' },
      {
        capabilities: { elicitation: { form: {}, url: {} } },
        inputRequired: { autoFulfill: false },
        // 2026-07-28 when the server speaks it (input_required), else the 2025 handshake.
        versionNegotiation: { mode: 'auto' },
      },
    );
    const { transport, stderr, pid } = createTransport(expanded, { path: options.path, messageBytes: options.limits.messageBytes });
    if (stderr) forwardLines(stderr, { maxChars: options.limits.logLineChars, onLine: (line) => options.log(`stderr: ${line}`) });
    const connection = new Connection(client, pid, options, onLost);
    client.setRequestHandler('elicitation/create', (request, ctx) => connection.question(request.params, ctx.mcpReq.signal));
    client.onerror = (error) => {
      // Once lost, or said already: a stream over the limit fails on each of its next chunks.
      if (connection.closedBecause !== null || error.message === connection.lastTransportError) return;
      connection.lastTransportError = error.message;
      options.log(`connection error: ${error.message}`);
      // The stdio transport drops its process on a fatal error (a line over messageBytes) and
      // tells the client only once the process is gone: fail the calls waiting on it now.
      setImmediate(() => {
        if (expanded.kind === 'stdio' && connection.startedPid !== null && pid() === null) connection.lost();
      });
    };
    client.onclose = () => connection.lost();
    try {
      await client.connect(transport, { timeout: options.timeoutMs });
      connection.startedPid = pid();
    } catch (error) {
      await connection.close();
      // No `cause`: the SDK's error may quote a secret (a URL, a header), and a cause gets logged whole.
      throw new McpServerError(options.server, 'start_failed', options.hide(startFailure(options.server, expanded, error)));
    }
    return connection;
  }

  /** Counts `call` as under way until the returned function is called. */
  underWay(call: CallTakingQuestions): () => void {
    this.calls.add(call);
    return () => this.calls.delete(call);
  }

  /** A question the server asked on the live connection: the one call under way takes it, or it is declined. */
  private question(params: ElicitRequestParams, withdrawn: AbortSignal): Promise<ElicitResult> | ElicitResult {
    const declined = (why: string): ElicitResult => {
      this.options.log(`asked for input on the live connection (a pre-2026-07-28 server): declined: ${why}. Its message: ${params.message}`);
      return { action: 'decline' };
    };
    if (this.calls.size !== 1)
      return declined(this.calls.size === 0 ? 'no call was under way' : `${this.calls.size} calls were under way, and nothing on the wire says which one asks`);
    const [call] = this.calls;
    const taken = call!.ask(params, withdrawn);
    return 'refused' in taken ? declined(taken.refused) : taken;
  }

  /** The server's tools, listed once per connection; `fresh`: listed again now. */
  tools(fresh = false): Promise<ListedTool[]> {
    if (fresh) this.listing = null;
    this.listing ??= listServerTools(this.client, { ...this.options, signal: this.lostSignal }).catch((error: unknown) => {
      this.listing = null;
      throw error;
    });
    return this.listing;
  }

  /** Why the connection closed, for a failed call's message. */
  describeClose(): string {
    return this.lastTransportError ?? this.closedBecause ?? 'the connection closed';
  }

  /** Stops the server (a local one's process: stdin closed, then SIGTERM, then SIGKILL) and waits until it is gone. Idempotent. */
  close(): Promise<void> {
    this.closed ??= (async () => {
      const pid = this.startedPid ?? this.pid();
      await this.client.close().catch(() => {});
      if (pid !== null) await waitForExit(pid, EXIT_WAIT_MS);
    })();
    return this.closed;
  }

  /** Closed without `close()`: the host forgets it (and stops what is left of it); waiting calls fail now. */
  private lost(): void {
    if (this.closedBecause !== null || this.closed) return;
    this.closedBecause = this.lastTransportError ?? 'the server stopped or its connection closed';
    this.lostController.abort(new SdkError(SdkErrorCode.ConnectionClosed, this.closedBecause));
    this.onLost(this);
    void this.close();
  }
}

/** Whether the process `pid` still runs (a signal 0 reaches it). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Waits until `pid` is gone, SIGKILL at the end of `ms`: `close()` leaves no process behind. */
async function waitForExit(pid: number, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (alive(pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  if (alive(pid)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
}

/** Why a server did not start, with the fix; the host hides secrets in it. */
function startFailure(server: string, expanded: ExpandedServer, error: unknown): string {
  const detail = error instanceof Error ? error.message : String(error);
  if (expanded.kind === 'stdio') {
    const notFound = (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
    return notFound
      ? `MCP server "${server}" could not be started: the command "${expanded.command}" was not found. Install it, or give its full path in mcpServers.${server}.command (a local server's PATH is Steward's own).`
      : `MCP server "${server}" (${expanded.command}) did not start or did not complete the MCP handshake: ${detail}. Run the command by hand to see its output, and check mcpServers.${server} in the package's manifest.`;
  }
  return `MCP server "${server}" at ${expanded.url} could not be reached or did not complete the MCP handshake: ${detail}. Check that it runs and that mcpServers.${server}.url and its headers are right.`;
}
