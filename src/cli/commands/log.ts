/**
 * `steward log ID`: the session's journal, one accepted event or model result per line,
 * with who acted (BY: the `by` of a user event). `--format jsonl` exports the audit trail:
 * one JSON object per line with seq, time, who, the event, and the state before and after.
 */
import type { Command } from 'commander';
import { SessionNotFoundError } from '../../core/errors.js';
import { quotedSetting } from '../../core/limits.js';
import { userOf, type JournalEntry } from '../../store/session-store.js';
import { CliError, printJson, wholeNumber, withContext, sessionIdArgument } from '../context.js';
import { formatJournal } from '../render.js';
import { safeJson } from '../../text/safe-text.js';
import type { CliIo } from '../io.js';
import { colorsFor } from '../colors.js';

/** One line of the audit trail. */
export interface AuditRecord {
  seq: number;
  at: string;
  /** Who acted: the user event's `by`; "steward" for model results and the creation. */
  by: string | null;
  kind: JournalEntry['kind'];
  type: string;
  event: unknown;
  stateBefore: string | null;
  stateAfter: string;
}

export function auditRecords(entries: readonly JournalEntry[], before: string | null): AuditRecord[] {
  let previous = before;
  return entries.map((e) => {
    const by = e.kind === 'event' ? (userOf(e.payload) ?? null) : 'steward';
    const record: AuditRecord = { seq: e.seq, at: e.at, by, kind: e.kind, type: e.type, event: e.payload, stateBefore: previous, stateAfter: e.state };
    previous = e.state;
    return record;
  });
}

export function register(program: Command, io: CliIo): void {
  program
    .command('log')
    .description("print a session's journal (every event — refused ones too — and every model result, in order, with who acted)")
    .argument('<id>', 'the session id', sessionIdArgument('steward log'))
    .option('--after <seq>', 'only entries after this sequence number', wholeNumber(0))
    .option('--limit <n>', 'at most this many entries', wholeNumber(1))
    .option('--format <format>', 'table (default), json, or jsonl: the audit trail, one JSON object per line (seq, at, by, event, stateBefore, stateAfter)')
    .option('--json', 'print the entries as JSON (same as --format json)')
    .action(async (id: string, options: { after?: number; limit?: number; json?: boolean; format?: string }, command: Command) => {
      const format = options.format ?? (options.json ? 'json' : 'table');
      if (!['table', 'json', 'jsonl'].includes(format)) throw new CliError('usage', `--format is table, json or jsonl (got ${quotedSetting(format)}).`);
      await withContext(
        command.optsWithGlobals(),
        io,
        async (ctx) => {
          if (!(await ctx.store.load(id))) throw new SessionNotFoundError(id, ctx.dbPath);
          const after = options.after ?? 0;
          // One entry more in front, for the state before the first one shown.
          const read = await ctx.store.journal(id, {
            ...(after > 0 ? { afterSeq: after - 1 } : {}),
            ...(options.limit !== undefined ? { limit: options.limit + (after > 0 ? 1 : 0) } : {}),
          });
          const before = after > 0 && read[0]?.seq === after ? read[0].state : null;
          const entries = after > 0 && read[0]?.seq === after ? read.slice(1) : read;
          if (format === 'json') printJson(io, entries);
          else if (format === 'jsonl')
            io.stdout.write(
              auditRecords(entries, before)
                .map((r) => `${safeJson(JSON.stringify(r))}\n`)
                .join(''),
            );
          else io.stdout.write(`${formatJournal(entries, colorsFor(io))}\n`);
        },
        { readStore: true },
      );
    });
}
