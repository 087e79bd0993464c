/**
 * `steward resume ID [--json] [--fail-fast]`: continues a session that a crash or a kill left
 * `running` (a model call was in flight): the call runs again, and the command returns when
 * the session waits for the user again (or is done), printing the view — with --json the
 * same JSON as `send --json`. A session that already waits is only shown (exit 0).
 *
 * Only one process should run a session. On PostgreSQL the runner holds the session's lease.
 * A holder of this machine whose process is gone is taken over at once (the runtime proves
 * it gone: holder-process.ts). Any other holder may be alive, so resume waits for its lease
 * to run out, saying how long (lease-wait.ts), and ends with `session_running_elsewhere`,
 * naming it, if the holder renewed it meanwhile; `--fail-fast` ends so at once. On SQLite,
 * resume one whose `steward run` is still alive and both make the model call; the store's
 * revision check lets one of them save it.
 */
import type { Command } from 'commander';
import { CliError, peekSession, printJson, viewJson, withContext, sessionIdArgument } from '../context.js';
import { retryWhileLeased } from '../lease-wait.js';
import { formatBlocks, headline, waitBlocks } from '../render.js';
import { safeLine } from '../../text/safe-text.js';
import type { CliIo } from '../io.js';
import { colorsFor } from '../colors.js';

export function register(program: Command, io: CliIo): void {
  program
    .command('resume')
    .description('continue a session left running by a crash: its model call runs again, up to the next wait')
    .argument('<id>', 'the session id (see `steward list`)', sessionIdArgument('steward resume'))
    .option('--json', 'print the session view as JSON (as `send --json` does)')
    .option('--fail-fast', "PostgreSQL: fail at once when another process holds the session's lease, instead of waiting for it to run out")
    .action(async (id: string, flags: { json?: boolean; failFast?: boolean }, command: Command) => {
      await withContext(
        command.optsWithGlobals(),
        io,
        async (ctx) => {
          const peek = await peekSession(ctx, id);
          let view = peek.view;
          let revision: number | undefined = peek.revision;
          if (view.phase === 'running') {
            const session = await retryWhileLeased(() => ctx.runtime.resumeSession(id), {
              wait: flags.failFast !== true,
              say: (line) => io.stderr.write(`${safeLine(line)}\n`),
            });
            view = await session.settled();
            revision = session.revision;
            if (session.actorRef.getSnapshot().status === 'stopped') {
              throw new CliError(
                'session_stopped',
                `Session "${id}" stopped before it waited for you again (another process saved it first, or the store failed). Look at it with \`steward show ${id}\`.`,
              );
            }
          }
          if (flags.json) {
            printJson(io, viewJson(view, revision));
          } else {
            const blocks = waitBlocks(view, { modelLabel: ctx.model.label, packages: ctx.runtime.packages });
            io.stdout.write(`${headline(view)}\n${blocks.length ? `\n${formatBlocks(blocks, colorsFor(io))}\n` : ''}`);
          }
        },
        { command: 'resume' },
      );
    });
}
