/**
 * `steward audit ID`: who approved what. One row per decision that answered a wait — the wait,
 * when it opened and closed, who decided and through what, the decision and its edits, and a
 * hash of what the person was shown — as JSON Lines (default) or CSV. `--since DATE` reads
 * every session updated since then (or, with an ID, that one) and keeps the decisions taken
 * since; the rows are written as they are read, and a long walk says how far it got on stderr.
 */
import { once } from 'node:events';
import type { Command } from 'commander';
import * as z from 'zod';
import { quotedSetting } from '../../core/limits.js';
import { auditRowsSince, sessionAuditRows } from '../../runtime/audit-rows.js';
import { auditHeader, auditLine } from '../../runtime/audit-output.js';
import { AuditFormatSchema, type AuditFormat, type AuditRow } from '../../runtime/audit-row.js';
import { safeLine, safeText } from '../../text/safe-text.js';
import { CliError, sessionIdArgument, withContext } from '../context.js';
import type { CliIo } from '../io.js';

/** A date (midnight UTC) or a date and time with its offset. */
const SinceSchema = z.union([z.iso.date(), z.iso.datetime({ offset: true })]);

/** How many sessions between two progress lines of a `--since` walk. */
const PROGRESS_EVERY = 100;

function sinceDate(text: string | undefined): Date | undefined {
  if (text === undefined) return undefined;
  if (!SinceSchema.safeParse(text).success)
    throw new CliError('usage', `--since takes a date (2026-01-31) or a date and time with its offset (2026-01-31T09:00:00Z), got ${quotedSetting(text)}.`);
  return new Date(text);
}

/** Writes `text`, waiting when stdout's buffer is full: a long trail never piles up in memory. */
async function write(io: CliIo, text: string): Promise<void> {
  if (!io.stdout.write(text)) await once(io.stdout, 'drain');
}

export function register(program: Command, io: CliIo): void {
  program
    .command('audit')
    .description('print who decided what: one row per decision that answered a wait (the wait, who, through what, the edits, a hash of what was shown)')
    .argument('[id]', 'the session id (leave it out with --since: every session)', sessionIdArgument('steward audit'))
    .option('--since <date>', 'only decisions taken since this date (2026-01-31, or 2026-01-31T09:00:00Z); without an id, of every session updated since')
    .option('--format <format>', 'jsonl (default: one JSON object per line) or csv (a header, then one row per line)')
    .action(async (id: string | undefined, options: { since?: string; format?: string }, command: Command) => {
      const parsed = AuditFormatSchema.safeParse(options.format ?? 'jsonl');
      if (!parsed.success) throw new CliError('usage', `--format is jsonl or csv (got ${quotedSetting(options.format ?? '')}).`);
      const format: AuditFormat = parsed.data;
      const since = sinceDate(options.since);
      if (id === undefined && since === undefined)
        throw new CliError('usage', 'Name a session (steward audit ID) or a date (steward audit --since 2026-01-31).');
      await withContext(
        command.optsWithGlobals(),
        io,
        async (ctx) => {
          if (id !== undefined) {
            // One session's rows are read before any is written: a journal that does not replay prints nothing but the error.
            const rows = [...(await sessionAuditRows(ctx.runtime, ctx.store, id))].filter((row) => !since || Date.parse(row.decidedAt) >= since.getTime());
            await write(io, auditHeader(format));
            for (const row of rows) await write(io, auditLine(row, format));
            return;
          }
          // The runtime is built (its packages read) before the header: a broken package fails with nothing written.
          const runtime = ctx.runtime;
          await write(io, auditHeader(format));
          let rows = 0;
          let skipped = 0;
          const trail: AsyncIterable<AuditRow> = auditRowsSince(runtime, ctx.store, since!, {
            onSession: (read) => {
              if (read % PROGRESS_EVERY === 0) io.stderr.write(`steward audit: ${read} sessions read, ${rows} rows\n`);
            },
            onError: (session, error) => {
              skipped += 1;
              const message = error instanceof Error ? error.message : String(error);
              io.stderr.write(`steward audit: session ${safeLine(session.id)} skipped: ${safeText(message)}\n`);
            },
          });
          for await (const row of trail) {
            rows += 1;
            await write(io, auditLine(row, format));
          }
          if (skipped > 0) throw new CliError('user_error', `${skipped} session(s) could not be read (see above); the rows of the others were printed.`);
        },
        { readStore: true },
      );
    });
}
