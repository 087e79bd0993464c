/**
 * `steward mcp`: Steward's MCP server on stdin/stdout, for hosts that start a local command
 * (desktop assistants, IDEs). The host's calls run teams on the store of --db / STEWARD_DB with
 * the model of the environment, as `steward run` does; each wait is a form the host shows its
 * person (src/protocols/mcp). Everything it says besides the protocol goes to stderr: stdout
 * is the protocol's. It ends when the host closes stdin, or on SIGINT / SIGTERM; a session
 * under way then stays saved and resumes on the next call that comes back to it.
 */
import type { Command } from 'commander';
import { printableLocation } from '../../store/open-store.js';
import { actorName, openContext } from '../context.js';
import type { CliIo } from '../io.js';
import { onStopSignal } from '../signals.js';

/** On stop, how long a send under way may take to settle before it is stopped (saved: it resumes later). */
const GRACE_MS = 10_000;

export function register(program: Command, io: CliIo): void {
  program
    .command('mcp')
    .description(
      'serve Steward\'s MCP server on stdin/stdout, for an MCP host (its mcpServers entry: command "steward", args ["mcp"]): ' +
        'a run_<package> tool per package; each wait of a session is a form the host shows (elicitation)',
    )
    .action(async (_flags: unknown, command: Command) => {
      // Loaded here: the other commands never pay for the MCP server.
      const { serveStdio, StdioServerTransport } = await import('@modelcontextprotocol/server/stdio');
      const { SessionHost } = await import('../../serve/session-host.js');
      const { mcpServerParts, stewardMcpServer } = await import('../../protocols/mcp/server.js');
      const { RequestStates } = await import('../../protocols/mcp/request-state.js');
      const { stewardVersion } = await import('../../package-root.js');
      const options = command.optsWithGlobals();
      const by = actorName(options);
      const ctx = await openContext(options, io, { command: 'mcp' });
      const log = (message: string) => io.stderr.write(`${message}\n`);
      try {
        const host = new SessionHost(ctx.runtime, ctx.store, { log });
        host.startDeadlines();
        // No tokens here: the states are this process's own. A host that restarts it comes back to a session with continue_session.
        const states = RequestStates.forTokens({ kind: 'none' });
        const deps = {
          runtime: ctx.runtime,
          store: ctx.store,
          host,
          states,
          list: (page: { limit: number; after: string | null }) => ctx.store.list(page),
          log: (message: string) => log(`steward mcp: ${message}`),
        };
        const caller = { ...(by !== undefined ? { name: by } : {}), who: { ...(by !== undefined ? { by } : {}), through: 'mcp' as const } };
        const parts = mcpServerParts([...ctx.runtime.packages.values()], ctx.runtime.limits.userTextChars, stewardVersion());
        // Until the host closes stdin, or a stop signal; every listener added here is removed again (it may run inside another program).
        let stop: (why: string) => void = () => {};
        const ended = new Promise<string>((resolve) => (stop = resolve));
        const closedStdin = () => stop('stdin closed');
        io.stdin.once('end', closedStdin);
        io.stdin.once('close', closedStdin);
        const offSignals = onStopSignal((signal) => stop(signal));
        const served = serveStdio(() => stewardMcpServer(parts, deps, caller), {
          transport: new StdioServerTransport(io.stdin, io.stdout),
          onerror: (error) => log(`steward mcp: ${error.message}`),
        });
        log(
          `Steward MCP server on stdio · store ${printableLocation(ctx.dbPath)} · model: ${ctx.model.label} · tools: ${[...ctx.runtime.packages.keys()].map((id) => `run_${id}`).join(', ')}`,
        );
        const why = await ended;
        offSignals();
        io.stdin.off('end', closedStdin);
        io.stdin.off('close', closedStdin);
        log(`steward mcp: ${why}: stopping.`);
        await served.close();
        await host.drain(GRACE_MS);
      } finally {
        await ctx.close();
      }
    });
}
