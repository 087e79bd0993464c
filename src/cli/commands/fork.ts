/**
 * `steward fork ID --at SEQ`: a new session whose state is ID's after journal entry SEQ
 * (see `steward log ID`), replayed through the machine. ID is not touched. A model call
 * that was in flight at SEQ runs again in the fork, here, before the command returns.
 */
import type { Command } from 'commander';
import { printJson, viewJson, wholeNumber, withContext, sessionIdArgument } from '../context.js';
import { headline } from '../render.js';
import { safeLine } from '../../text/safe-text.js';
import type { CliIo } from '../io.js';

export function register(program: Command, io: CliIo): void {
  program
    .command('fork')
    .description("start a new session from a session's state after one of its journal entries (the original stays as it is)")
    .argument('<id>', 'the session to fork', sessionIdArgument('steward fork'))
    .requiredOption('--at <seq>', 'the journal entry to fork after (SEQ in `steward log ID`)', wholeNumber(1))
    .option('--json', 'print the new session view as JSON')
    .action(async (id: string, options: { at: number; json?: boolean }, command: Command) => {
      await withContext(
        command.optsWithGlobals(),
        io,
        async (ctx) => {
          const fork = await ctx.runtime.forkSession(id, { atSeq: options.at });
          const view = await fork.settled();
          if (options.json) {
            printJson(io, viewJson(view, fork.revision));
          } else {
            io.stdout.write(`${fork.id}\n`);
            io.stderr.write(`${safeLine(`Forked ${id} after entry ${options.at}: ${headline(view)}`)}\n`);
          }
        },
        { command: 'fork' },
      );
    });
}
