/** `steward list`: the sessions of the store, most recently updated first. */
import type { Command } from 'commander';
import { printJson, withContext } from '../context.js';
import { formatSessionList } from '../render.js';
import { listAll } from '../../store/list-page.js';
import type { CliIo } from '../io.js';
import { colorsFor } from '../colors.js';

export function register(program: Command, io: CliIo): void {
  program
    .command('list')
    .description('list the sessions, most recently updated first')
    .option('--json', 'print the sessions as JSON')
    .action(async (options: { json?: boolean }, command: Command) => {
      await withContext(
        command.optsWithGlobals(),
        io,
        async (ctx) => {
          const sessions = await listAll(ctx.store);
          if (options.json) printJson(io, sessions);
          else io.stdout.write(`${formatSessionList(sessions, colorsFor(io))}\n`);
        },
        { readStore: true },
      );
    });
}
