/**
 * Issue 12 in the scriptable CLI (real child processes, the demo model): `send approve
 * --reason/--role`, `send accept --edit TAG --text-file F`, `--as`, `log` with BY and
 * `--format jsonl`, `fork ID --at SEQ`, `new --max-burst-tokens`.
 */
import { writeFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import type { ViewJson } from '../../src/cli/context.js';
import { parseJson, runCli } from '../support/cli-process.js';
import { useTempDir } from '../support/temp.js';

const tmp = useTempDir('steward-cli-edits-');

it('edits a step and an artifact, records who did it, exports the audit trail and forks', async () => {
  const db = tmp.path('edits.db');
  const cli = (...args: string[]) => runCli(args, { db });
  const created = parseJson<ViewJson>(await cli('new', '--package', 'tiny', '--max-burst-tokens', '50000', '--json'));
  expect(created.tokens).toEqual({ burst: 0, session: 0, maxBurst: 50000 });
  const id = created.id;
  const input = parseJson<ViewJson>(await cli('send', id, 'input', '--text', 'A note about green tea', '--as', 'alice', '--json'));
  expect(input.waitingReason).toBe('approve_step');

  const badRole = await cli('send', id, 'approve', '--role', 'poet');
  expect(badRole.code).toBe(1);
  expect(badRole.stderr).toContain('Role "poet" is not a role of worker "echo"; it has no roles: leave edits.roleId out.');

  const approved = parseJson<ViewJson>(await cli('send', id, 'approve', '--reason', 'Restate it in one line.', '--as', 'bob', '--json'));
  expect(approved).toMatchObject({ waitingReason: 'review_artifact', pendingStep: { reason: 'Restate it in one line.', proposed: { by: 'bob' } } });

  const body = tmp.path('note.md');
  writeFileSync(body, 'Green tea, in one line.\n');
  const mismatched = await cli('send', id, 'accept', '--edit', 'note');
  expect(mismatched.code).toBe(1);
  expect(mismatched.stderr).toContain('accept takes --edit TAG --text-file FILE in pairs');
  const accepted = parseJson<ViewJson>(await cli('send', id, 'accept', '--edit', 'note', '--text-file', body, '--as', 'carol', '--json'));
  expect(accepted.blackboard.find((b) => b.tag === 'note')).toEqual({ tag: 'note', version: 2, writtenBy: 'carol' });

  const table = await cli('log', id);
  expect(table.stdout).toMatch(/SEQ\s+AT\s+BY\s+KIND/);
  expect(table.stdout).toMatch(/\d+\s+\S+ \S+\s+bob\s+event\s+user_approved_next_step/);

  const jsonl = await cli('log', id, '--format', 'jsonl');
  expect(jsonl.code, jsonl.stderr).toBe(0);
  const records = jsonl.stdout
    .trim()
    .split('\n')
    .map(
      (line) =>
        JSON.parse(line) as { seq: number; by: string | null; type: string; stateBefore: string | null; stateAfter: string; event: { edits?: unknown } },
    );
  expect(records.map((r) => r.seq)).toEqual(records.map((_, i) => i + 1));
  const approve = records.find((r) => r.type === 'user_approved_next_step' && r.stateAfter.startsWith('running'))!;
  expect(approve).toMatchObject({
    by: 'bob',
    stateBefore: 'waiting_user.approve_step',
    stateAfter: 'running.worker.thinking',
    event: { edits: { reason: 'Restate it in one line.' } },
  });
  records.slice(1).forEach((r, i) => expect(r.stateBefore).toBe(records[i]!.stateAfter));
  const after3 = await cli('log', id, '--format', 'jsonl', '--after', '3', '--limit', '1');
  expect(JSON.parse(after3.stdout.trim())).toMatchObject({ seq: 4, stateBefore: records[2]!.stateAfter });

  // Fork after the artifact was published, before it was accepted: the fork has the worker's version only.
  const atReview = records.find((r) => r.stateAfter === 'waiting_user.review_artifact')!.seq;
  const fork = await cli('fork', id, '--at', String(atReview), '--json');
  const forked = parseJson<ViewJson>(fork);
  expect(forked).toMatchObject({ waitingReason: 'review_artifact', forkedFrom: { id, seq: atReview } });
  expect(forked.blackboard.find((b) => b.tag === 'note')).toEqual({ tag: 'note', version: 1, writtenBy: 'echo' });
  const forkLog = await cli('log', forked.id);
  expect(forkLog.stdout).toContain(`forked from ${id} after entry ${atReview}`);
  const bad = await cli('fork', id, '--at', '999');
  expect(bad.code).toBe(1);
  expect(bad.stderr).toContain(`a whole number from 1 to ${records.length}`);
}, 120_000);
