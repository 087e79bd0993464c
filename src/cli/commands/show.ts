/** `steward show ID`: the session as stored, without running anything. */
import type { Command } from 'commander';
import { peekSession, printJson, viewJson, withContext, sessionIdArgument } from '../context.js';
import { formatSession } from '../render.js';
import type { CliIo } from '../io.js';
import { colorsFor } from '../colors.js';

export function register(program: Command, io: CliIo): void {
  program
    .command('show')
    .description('show a session: what it waits for, the artifact under review, the blackboard')
    .argument('<id>', 'the session id (see `steward list`)', sessionIdArgument('steward show'))
    .option('--json', 'print the session view as JSON')
    .action(async (id: string, options: { json?: boolean }, command: Command) => {
      await withContext(
        command.optsWithGlobals(),
        io,
        async (ctx) => {
          const { view, revision } = await peekSession(ctx, id);
          if (options.json) printJson(io, viewJson(view, revision));
          else io.stdout.write(`${formatSession(view, revision, { packages: ctx.runtime.packages, colors: colorsFor(io) })}\n`);
        },
        { readStore: true },
      );
    });
}
