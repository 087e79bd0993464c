/**
 * `steward inspect [ID]`: Steward's local inspector page for the sessions in the store —
 * the statechart with the active state, the events enabled now as forms, the session's
 * details and journal (with time travel), live while `steward run` works in another
 * terminal. `--manual` plays the model by hand from the page.
 */
import { Option, type Command } from 'commander';
import { SessionNotFoundError } from '../../core/errors.js';
import { loadStatelyConfig } from '../../inspect/config.js';
import { ManualModel } from '../../models/manual-model.js';
import { createRuntime } from '../../runtime/runtime.js';
import { leaseOwnerName } from '../../store/lease-keeper.js';
import { openStore, printableLocation } from '../../store/open-store.js';
import { tracesFromEnv } from '../otel-env.js';
import { packagesDirs } from '../packages-option.js';
import { chooseModel, printJson, resolveDbPath, wholeNumber, sessionIdArgument } from '../context.js';
import type { CliIo } from '../io.js';
import { layoutsDir } from '../layouts-dir.js';
import { untilStopSignal } from '../signals.js';

interface InspectFlags {
  port?: number;
  host?: string;
  manual?: boolean;
  json?: boolean;
}

export function register(program: Command, io: CliIo): void {
  program
    .command('inspect')
    .description('open the local inspector: the statechart, the events to send, the journal with time travel')
    .argument('[id]', 'the session to open first (default: choose in the page)', sessionIdArgument('steward inspect'))
    .option('--port <n>', 'the port (0: any free port; default from stately.config.json, else 4747)', wholeNumber(0, 65535))
    .addOption(new Option('--host <host>', 'the address to listen on (default from stately.config.json, else 127.0.0.1)').hideHelp())
    .option('--manual', 'play the model by hand: each model call waits for your reply in the page')
    .option('--json', 'print { url, token } as JSON')
    .action(async (id: string | undefined, flags: InspectFlags, command: Command) => {
      const { config } = loadStatelyConfig(io.cwd);
      const dbPath = resolveDbPath(command.optsWithGlobals(), io);
      const packagesDir = packagesDirs(command.optsWithGlobals(), io.env, io.cwd);
      const traces = await tracesFromEnv(io);
      const store = await openStore(dbPath, { env: io.env });
      try {
        const model = flags.manual ? new ManualModel() : await chooseModel(io);
        const runtime = createRuntime({
          model,
          store,
          packagesDir,
          leaseOwner: leaseOwnerName('steward inspect'),
          ...(traces ? { tracerProvider: traces.tracerProvider } : {}),
        });
        if (id !== undefined && !(await store.load(id))) throw new SessionNotFoundError(id);
        // Loaded here, not with the CLI: only this command needs hono and the page's server.
        const { startInspector } = await import('../../inspect/server.js');
        const layouts = layoutsDir(io.env);
        const inspector = await startInspector({
          runtime,
          store,
          host: flags.host ?? config.inspector.host,
          port: flags.port ?? config.inspector.port,
          ...(id !== undefined ? { sessionId: id } : {}),
          ...(layouts ? { layoutsDir: layouts } : {}),
        });
        if (flags.json) {
          printJson(io, { url: inspector.url, token: inspector.token });
        } else {
          io.stdout.write(`Steward inspector · store ${printableLocation(dbPath)} · model: ${model.label}\n`);
          io.stdout.write(`Open ${inspector.url}\n(the token in the URL is the key: share it like a password). Ctrl+C stops.\n`);
        }
        await untilStopSignal();
        for (const session of runtime.live.values()) session.stop();
        await inspector.close();
      } finally {
        await store.close().finally(() => traces?.shutdown());
      }
    });
}
