/** `steward log ID`: the session's journal, one accepted event or model result per line. */
import type { Command } from 'commander';
import { SessionNotFoundError } from '../../errors.js';
import { printJson, wholeNumber, withContext } from '../context.js';
import { formatJournal } from '../render.js';

export function register(program: Command): void {
  program
    .command('log')
    .description("print a session's journal (every event — refused ones too — and every model result, in order)")
    .argument('<id>', 'the session id')
    .option('--after <seq>', 'only entries after this sequence number', wholeNumber(0))
    .option('--limit <n>', 'at most this many entries', wholeNumber(1))
    .option('--json', 'print the entries as JSON')
    .action(async (id: string, options: { after?: number; limit?: number; json?: boolean }, command: Command) => {
      await withContext(command.optsWithGlobals(), async (ctx) => {
        if (!(await ctx.store.load(id))) throw new SessionNotFoundError(id, ctx.dbPath);
        const entries = await ctx.store.journal(id, {
          ...(options.after !== undefined ? { afterSeq: options.after } : {}),
          ...(options.limit !== undefined ? { limit: options.limit } : {}),
        });
        if (options.json) printJson(entries);
        else process.stdout.write(`${formatJournal(entries)}\n`);
      }, { readStore: true });
    });
}
