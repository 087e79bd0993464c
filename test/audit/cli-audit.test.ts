/**
 * `steward audit` as a person runs it (real child processes): the rows of a session the CLI
 * decided (through: cli, by --as, the hash of what `steward show` showed), the same rows as
 * JSON Lines and as CSV (parsed back, formula cells prefixed), and `--since` over every session.
 */
import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ViewJson } from '../../src/cli/context.js';
import { createRuntime, SqliteStore, type SessionView } from '../../src/index.js';
import { sessionAuditRows } from '../../src/runtime/audit-rows.js';
import { AUDIT_COLUMNS, AuditRowSchema, type AuditRow } from '../../src/runtime/audit-row.js';
import { parseJson, runCli } from '../support/cli-process.js';
import { useTempDir } from '../support/temp.js';
import { AUDIT_DECISIONS, auditModel, expectAuditRows, shownHash } from './audit-session.js';
import { expectedCells, parseCsv } from './csv-parse.js';

const tmp = useTempDir('steward-audit-cli-');

const rowsOf = (stdout: string): AuditRow[] =>
  stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => AuditRowSchema.parse(JSON.parse(line)));

/** A session decided through the library (by ana, bob and "=carl"), in `db`: its id, its rows and the views of its waits. */
async function librarySession(db: string) {
  const store = new SqliteStore(db);
  const runtime = createRuntime({ model: auditModel(), store });
  const session = await runtime.createSession({ packageId: 'short-story' });
  const views: SessionView[] = [];
  for (const decision of AUDIT_DECISIONS) {
    views.push(session.view());
    const result = await session.send({ ...decision, ...(decision.by === 'carl' ? { by: '=carl' } : {}), via: 'front-desk' });
    expect(result.ok).toBe(true);
  }
  const rows = [...(await sessionAuditRows(runtime, store, session.id))];
  await runtime.close();
  store.close();
  return { id: session.id, rows, views };
}

describe('steward audit', () => {
  it('prints the rows of a session the CLI decided: by --as, through cli, the hash of what show showed', async () => {
    const db = tmp.path('cli.db');
    const cli = (...args: string[]) => runCli(args, { db });
    const created = parseJson<ViewJson>(await cli('new', '--package', 'tiny', '--json'));
    const id = created.id;
    const shown: ViewJson[] = [created];
    parseJson<ViewJson>(await cli('send', id, 'input', '--text', 'A note about green tea', '--as', 'alice', '--json'));
    shown.push(parseJson<ViewJson>(await cli('show', id, '--json')));
    const approved = parseJson<ViewJson>(await cli('send', id, 'approve', '--reason', 'Restate it in one line.', '--as', 'bob', '--json'));
    expect(approved.waitingReason).toBe('review_artifact');
    shown.push(approved);
    const body = tmp.path('note.md');
    writeFileSync(body, 'Green tea, in one line.\n');
    await cli('send', id, 'accept', '--edit', 'note', '--text-file', body, '--as', 'carol', '--json');

    const result = await cli('audit', id);
    expect(result.code, result.stderr).toBe(0);
    const rows = rowsOf(result.stdout);
    expect(rows.map((r) => [r.wait, r.waitingReason, r.decision, r.by, r.via, r.through, r.subject])).toEqual([
      [1, 'intake', 'submitted', 'alice', null, 'cli', null],
      [2, 'approve_step', 'approved', 'bob', null, 'cli', 'echo'],
      [3, 'review_artifact', 'accepted', 'carol', null, 'cli', 'a1'],
    ]);
    expect(rows[1]!.edits).toEqual({ reason: 'Restate it in one line.' });
    expect(rows[2]!.edits).toEqual({ note: 'Green tea, in one line.\n' });
    expect(rows.map((r) => r.shownSha256)).toEqual(shown.map((view) => shownHash(view)));
  }, 120_000);

  it('prints the same rows as JSON Lines and as CSV, and --since keeps the decisions taken since', async () => {
    const db = tmp.path('library.db');
    const first = await librarySession(db);
    expectAuditRows(
      first.rows.map((r) => ({ ...r, by: r.by === '=carl' ? 'carl' : r.by })),
      first.id,
      first.views,
      null,
      'front-desk',
    );
    const second = await librarySession(db);
    const cli = (...args: string[]) => runCli(args, { db });

    const jsonl = await cli('audit', first.id, '--format', 'jsonl');
    expect(jsonl.code, jsonl.stderr).toBe(0);
    expect(rowsOf(jsonl.stdout)).toEqual(first.rows);

    const csv = await cli('audit', first.id, '--format', 'csv');
    expect(csv.code, csv.stderr).toBe(0);
    const [header, ...records] = parseCsv(csv.stdout);
    expect(header).toEqual(AUDIT_COLUMNS);
    expect(records).toEqual(first.rows.map((row) => expectedCells(row, AUDIT_COLUMNS)));
    // The formula-looking name is text in a spreadsheet.
    expect(records.map((r) => r[AUDIT_COLUMNS.indexOf('by')])).toContain("'=carl");

    // Every session's decisions taken at or after a decision of the first session: that one on, and all of the second.
    const cut = first.rows[3]!;
    const since = await cli('audit', '--since', cut.decidedAt);
    expect(since.code, since.stderr).toBe(0);
    const kept = rowsOf(since.stdout);
    const wanted = [...second.rows, ...first.rows].filter((r) => Date.parse(r.decidedAt) >= Date.parse(cut.decidedAt));
    expect(kept).toEqual(wanted);
    // A day in the future: nothing; a bad date: a usage error.
    expect((await cli('audit', '--since', '2999-01-01')).stdout).toBe('');
    const bad = await cli('audit', '--since', 'yesterday');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('--since takes a date');
    expect((await cli('audit')).stderr).toContain('Name a session');
  }, 120_000);
});
