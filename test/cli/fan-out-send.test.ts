/**
 * A fan-out decided with the real `steward` command, one item per send: the manager proposes
 * three independent workers at once (a fake OpenAI server answers the trio package). `show`
 * lists the team; `send approve` without `--item` names the items instead of guessing; each
 * step is approved or rejected by `--item`, each artifact of the fan-in by `--artifact`.
 */
import { afterEach, expect, it } from 'vitest';
import type { ViewJson } from '../../src/cli/context.js';
import { parseJson, runCli } from '../support/cli-process.js';
import { useTempDir } from '../support/temp.js';
import { trioPackage } from '../support/trio-package.js';
import { proposeTrio, startTrioServer, type TrioServer } from '../support/trio-openai.js';

const tmp = useTempDir('steward-cli-fan-out-');
/** Many CLI processes in a row (the first compiles the CLI): a slow machine takes its time. */
const CLI_TIMEOUT = 120_000;

let trio: TrioServer | undefined;
afterEach(async () => {
  await trio?.server.close();
  trio = undefined;
});

it('decides three proposed steps and two artifacts one send at a time', { timeout: CLI_TIMEOUT }, async () => {
  trio = await startTrioServer([proposeTrio(true)]);
  const packages = trioPackage(tmp.path('pkgs'));
  const cli = (...args: string[]) => runCli([...args, '--packages', packages], { db: tmp.path('fan-out.db'), env: trio!.env });
  const json = async (...args: string[]) => {
    const result = await cli(...args, '--json');
    expect(result.code, result.stderr).toBe(0);
    return parseJson<ViewJson>(result);
  };

  const id = (await json('new', '--package', 'trio')).id;
  const proposed = await json('send', id, 'input', '--text', 'Notes from three sides');
  expect(proposed.waitingReason).toBe('approve_step');
  expect(proposed.team?.map((t) => [t.item, t.status])).toEqual([
    ['run_north', 'proposed'],
    ['run_south', 'proposed'],
    ['run_east', 'proposed'],
  ]);

  // show lists each item with its worker and status, and says how to decide it.
  const shown = await cli('show', id);
  expect(shown.stdout).toContain('Waiting for you: approve or reject 3 proposed steps, one at a time (north, south, east).');
  expect(shown.stdout).toMatch(/Team \(workers at once\):\s+run_north · north · proposed: waits for approval\s+run_south · south · proposed/);
  expect(shown.stdout).toContain('Proposed step 1 of 3 · run_north · run north');
  expect(shown.stdout).toContain('approve --item run_north');

  // Without --item the CLI names the items: nothing is sent.
  const unnamed = await cli('send', id, 'approve');
  expect(unnamed.code).toBe(1);
  expect(unnamed.stderr).toContain(
    'user_approved_next_step needs --item: 3 proposed steps wait, each decided on its own: run_north (north), run_south (south), run_east (east).',
  );

  // `reject` is the artifact's: with --item the CLI points to reject-step.
  const wrongAlias = await cli('send', id, 'reject', '--item', 'run_south');
  expect(wrongAlias.code).toBe(1);
  expect(wrongAlias.stderr).toContain('--item names a proposed step, not an artifact: decide it with `reject-step --item run_south`');

  const north = await json('send', id, 'approve', '--item', 'run_north');
  expect(north.team?.find((t) => t.item === 'run_north')?.status).toBe('approved');
  expect(north.waitingReason).toBe('approve_step');
  const south = await json('send', id, 'reject-step', '--item', 'run_south', '--reason', 'Not the south.');
  expect(south.team?.map((t) => t.item)).toEqual(['run_north', 'run_east']);
  expect(trio.calls.get('north')).toBeUndefined();

  // An item already decided is refused by the session, in its words.
  const again = await cli('send', id, 'reject-step', '--item', 'run_north');
  expect(again.code).toBe(1);
  expect(again.stderr).toContain('event_refused');

  // The last one left needs no --item; it starts the approved ones together, edited.
  const review = await json('send', id, 'approve', '--reason', 'Write the east note, briefly.');
  expect(review.waitingReason).toBe('review_artifact');
  expect(Object.fromEntries(trio.calls)).toEqual({ manager: 1, north: 1, east: 1 });
  const submitted = review.team!.filter((t) => t.status === 'submitted');
  expect(submitted.map((t) => t.workerId).sort()).toEqual(['east', 'north']);
  const byWorker = Object.fromEntries(submitted.map((t) => [t.workerId, (t as { artifact: { id: string } }).artifact.id]));

  const showReview = await cli('show', id);
  expect(showReview.stdout).toContain('Waiting for you: accept or reject 2 artifacts, one at a time');
  expect(showReview.stdout).toContain(`accept --artifact ${byWorker.north}`);
  expect(showReview.stdout).toContain('The north note.');
  expect(showReview.stdout).toContain('The east note.');

  const unnamedArtifact = await cli('send', id, 'accept');
  expect(unnamedArtifact.code).toBe(1);
  expect(unnamedArtifact.stderr).toContain('user_accepted_artifact needs --artifact: 2 artifacts are under review');

  const rejected = await json('send', id, 'reject', '--artifact', byWorker.east!, '--reason', 'Too brief.');
  expect(rejected.waitingReason).toBe('review_artifact');
  // The last artifact needs no --artifact; the manager then finishes.
  const done = await json('send', id, 'accept');
  expect(done.state).toBe('done');
  expect(Object.fromEntries(done.artifacts.map((a) => [a.workerId, a.status]))).toEqual({ north: 'accepted', east: 'rejected' });

  // The journal holds one decision per item, each naming it (and the refused one, which changed nothing).
  const log = await cli('log', id, '--format', 'jsonl');
  const decisions = log.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { type: string; event: { item?: string; artifactId?: string; edits?: unknown } })
    .filter((r) => r.type.startsWith('user_') && r.type !== 'user_submitted_input')
    .map((r) => [r.type, r.event.item ?? r.event.artifactId]);
  expect(decisions).toEqual([
    ['user_approved_next_step', 'run_north'],
    ['user_rejected_next_step', 'run_south'],
    ['user_rejected_next_step', 'run_north'],
    ['user_approved_next_step', 'run_east'],
    ['user_rejected_artifact', byWorker.east],
    ['user_accepted_artifact', byWorker.north],
  ]);
  // East ran with the edited task.
  expect(JSON.stringify(trio.server.requests)).toContain('Write the east note, briefly.');
});
