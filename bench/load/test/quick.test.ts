/**
 * The load benchmark's correctness half, as CI runs it (`npm run test:bench`): `--quick`
 * drives sessions through real `steward serve` processes on SQLite and PostgreSQL against the
 * benchmark's model server, SIGKILLs servers, and must find nothing lost and no session run
 * by two servers at once. Timings are not asserted (the machine is shared).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { postgresUnavailable } from '../../../test/support/postgres.js';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'steward-load-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.skipIf(postgresUnavailable !== null)('bench:load --quick', () => {
  it('loses nothing and never runs a session on two servers, across SQLite, PostgreSQL and kills', { timeout: 600_000, retry: 1 }, () => {
    const out = join(dir, 'load.json');
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'bench/load/run.ts', '--quick', '--json', out], {
      cwd: root,
      encoding: 'utf8',
      timeout: 590_000,
    });
    expect(run.stdout, run.stderr).toContain('correctness: nothing lost');
    // Each store's added p99 against the floor's of the same run, beside its target.
    for (const store of ['sqlite', 'postgres'])
      expect(run.stdout).toMatch(new RegExp(`against the floor, ${store} · 20 sessions: added p99 .+ = [\\d.]+× \\(target ≤`));
    expect(run.status).toBe(0);
    const figures = JSON.parse(readFileSync(out, 'utf8')) as {
      runs: Array<{
        store: string;
        actions: number;
        lost: number;
        overlaps: number;
        rounds: number;
        sessionsDone: number;
        modelMsPerAction: number;
        pgTransactionsPerSend: number | null;
      }>;
      kills: { kills: number; lost: number; overlaps: number; notResumed: number };
    };
    expect(figures.runs.map((r) => r.store)).toEqual(['floor', 'sqlite', 'postgres']);
    // The floor (no Steward) plays the package to its end with the model calls a Steward session makes.
    expect(figures.runs[0]!.rounds).toBeGreaterThan(0);
    expect(figures.runs[0]!.sessionsDone).toBeGreaterThan(0);
    // Its calls carry each session's own marker: the model's time is found for its actions.
    expect(figures.runs[0]!.modelMsPerAction).toBeGreaterThan(0);
    for (const r of figures.runs) expect(r).toMatchObject({ lost: 0, overlaps: 0 });
    expect(figures.runs.every((r) => r.actions > 0)).toBe(true);
    // The database's round trips per send are counted on PostgreSQL only.
    expect(figures.runs.map((r) => r.pgTransactionsPerSend === null)).toEqual([true, true, false]);
    expect(figures.runs[2]!.pgTransactionsPerSend).toBeGreaterThan(1);
    expect(figures.kills).toMatchObject({ kills: 3, lost: 0, overlaps: 0, notResumed: 0 });
  });
});
