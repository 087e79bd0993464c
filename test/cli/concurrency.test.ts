/**
 * Two `steward send` processes on one session of one SQLite file, at once, turn after
 * turn (demo model). Exactly one wins each turn; the other fails cleanly; the journal has
 * no gap and no duplicate.
 *
 * Which error the loser gets depends on when it loaded the session:
 * - with `--revision N` (both send "only if the session is still at N", the revision both
 *   saw) it is always `conflict`: the loser either fails the store's revision check on its
 *   first write, or sees a newer revision at load time;
 * - without it, a loser that loaded the same revision as the winner fails its write with
 *   `conflict`, while one that loaded after the winner moved on is told `event_refused`
 *   (the state no longer accepts the event, or the agents are still working). A demo-model
 *   turn takes a few milliseconds and process start-up jitters by more, so both happen: the
 *   last turn asserts whichever one occurred, precisely.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { ViewJson } from '../../src/cli/context.js';
import { SqliteStore } from '../../src/index.js';
import type { JournalEntry } from '../../src/store.js';
import { parseJson, runCli, type CliResult } from '../support/cli-process.js';

/** Generous: child processes start slowly on a busy machine. */
const CLI_TIMEOUT = 90_000;

let dir: string;
let db: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'steward-race-'));
  db = join(dir, 'steward.db');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const cli = (...args: string[]) => runCli(args, { db });

async function journal(id: string): Promise<JournalEntry[]> {
  const store = new SqliteStore(db);
  try {
    return await store.journal(id);
  } finally {
    await store.close();
  }
}

function expectNoGaps(entries: JournalEntry[]): void {
  expect(entries.map((e) => e.seq)).toEqual(entries.map((_, i) => i + 1));
}

/**
 * The three ways a loser learns it lost: its write failed the store's revision check, the
 * session changed between its look and its load, or (--revision) it was already newer.
 */
function conflictMessage(id: string, revision: number | undefined, prefix = ''): RegExp {
  const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(
    `^${esc(prefix)}Session "${id}" (is at revision \\d+, but this write expected revision ${revision}: another writer saved it first` +
      `|changed while this command loaded it \\(revision ${revision} → \\d+\\)` +
      `|is at revision \\d+, not ${revision}: it changed since you looked)`,
  );
}

/** Runs both at once; returns [winner, loser] and checks that there is exactly one of each. */
async function race(a: string[], b: string[]): Promise<{ winner: CliResult; loser: CliResult; winnerIsA: boolean }> {
  const [ra, rb] = await Promise.all([cli(...a), cli(...b)]);
  const codes = [ra.code, rb.code].sort();
  expect(codes, `A: ${ra.stderr}\nB: ${rb.stderr}`).toEqual([0, 1]);
  const winnerIsA = ra.code === 0;
  return { winner: winnerIsA ? ra : rb, loser: winnerIsA ? rb : ra, winnerIsA };
}

it(
  'two processes sending to one session at once: one wins each turn, the other gets a clean error',
  async () => {
    const created = parseJson<ViewJson>(await cli('new', '--package', 'tiny', '--json'));
    const id = created.id;

    // Turn 1: two different requests, both "only at revision 1".
    const t1 = await race(
      ['send', id, 'input', '--text', 'from A', '--revision', String(created.revision), '--json'],
      ['send', id, 'input', '--text', 'from B', '--revision', String(created.revision), '--json'],
    );
    const afterInput = parseJson<ViewJson>(t1.winner);
    expect(afterInput.state).toBe('waiting_user.approve_step');
    expect(t1.loser.stderr).toMatch(conflictMessage(id, created.revision, 'steward [conflict]: '));
    expect(parseJson(t1.loser)).toMatchObject({ error: { code: 'conflict' } });
    let entries = await journal(id);
    expectNoGaps(entries);
    const texts = entries.filter((e) => e.type === 'user_submitted_input').map((e) => (e.payload as { text: string }).text);
    expect(texts).toEqual([t1.winnerIsA ? 'from A' : 'from B']);

    // Turn 2: both approve the proposed step, at the revision they saw.
    const t2 = await race(
      ['send', id, 'approve', '--revision', String(afterInput.revision), '--json'],
      ['send', id, 'approve', '--revision', String(afterInput.revision), '--json'],
    );
    const afterApprove = parseJson<ViewJson>(t2.winner);
    expect(afterApprove).toMatchObject({ state: 'waiting_user.review_artifact', artifact: { id: 'a1' } });
    expect(parseJson(t2.loser)).toMatchObject({ error: { code: 'conflict', message: expect.stringMatching(conflictMessage(id, afterInput.revision)) } });
    entries = await journal(id);
    expectNoGaps(entries);
    expect(entries.filter((e) => e.type === 'user_approved_next_step')).toHaveLength(1);
    expect(entries.filter((e) => e.type === 'xstate.done.actor.workerTurn')).toHaveLength(1);
    // One write may carry several entries (those that arrive while a write is under way).
    expect(afterApprove.revision).toBeLessThanOrEqual(entries.at(-1)!.seq);

    // Turn 3: no --revision; both accept a1.
    const t3 = await race(['send', id, 'accept', '--artifact', 'a1', '--json'], ['send', id, 'accept', '--artifact', 'a1', '--json']);
    const afterAccept = parseJson<ViewJson>(t3.winner);
    expect(afterAccept).toMatchObject({ state: 'waiting_user.approve_step', pendingStep: { workerId: 'summarize' } });
    const lost = parseJson<{ error: { code: string; message: string } }>(t3.loser).error;
    entries = await journal(id);
    expectNoGaps(entries);
    const accepts = entries.filter((e) => e.type === 'user_accepted_artifact');
    if (lost.code === 'conflict') {
      // It loaded the revision the winner started from: its write was refused, nothing of it is saved.
      expect(lost.message).toMatch(conflictMessage(id, afterApprove.revision));
      expect(accepts.map((e) => e.state)).toEqual(['running.manager.thinking']);
    } else {
      // It loaded after the winner's event: the session no longer takes an accept.
      expect(lost.code).toBe('event_refused');
      expect(lost.message).toMatch(/^"user_accepted_artifact" is not accepted while (the session waits in approve_step|the agents are working)/);
      // One accept moved the session; a refusal the machine saw is journaled with the state unchanged.
      expect(accepts.filter((e) => e.state.startsWith('running')).length).toBe(1);
      for (const refused of accepts.filter((e) => !e.state.startsWith('running'))) expect(refused.state).toBe('waiting_user.approve_step');
    }
    expect(entries.at(-1)!.state).toBe('waiting_user.approve_step');
  },
  CLI_TIMEOUT,
);
