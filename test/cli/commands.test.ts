/**
 * Every scriptable command of `steward`, run on a temporary SQLite file with the offline demo
 * model: output (human and --json), refused events, errors. Most run inside the worker
 * (test/support/cli-process.ts); one test runs the common ones as real processes of the bin too.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JournalEntry, SessionSummary } from '../../src/store.js';
import type { ViewJson } from '../../src/cli/context.js';
import { parseJson, root, runCli, startCli, type CliResult } from '../support/cli-process.js';

/** Generous: child processes start slowly on a busy machine. */
const CLI_TIMEOUT = 90_000;

let dir: string;
let db: string;
const cli = (...args: string[]) => runCli(args, { db });

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'steward-cli-'));
  db = join(dir, 'steward.db');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function expectOk(result: CliResult): void {
  expect(result.stderr, result.stdout).toBe('');
  expect(result.code).toBe(0);
}

/** Failed cleanly: exit 1, one line `steward [code]: message` on stderr, no stack trace. */
function expectFailure(result: CliResult, code: string, message: RegExp | string): void {
  expect(result.code, result.stdout + result.stderr).toBe(1);
  expect(result.stderr).toContain(`steward [${code}]: `);
  expect(result.stderr).toMatch(typeof message === 'string' ? new RegExp(message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')) : message);
  expect(result.stderr).not.toMatch(/\n\s+at /);
}

describe('steward (scriptable commands)', () => {
  it(
    'packages: lists packages and their workers with input → output tags',
    async () => {
      const [human, json] = await Promise.all([cli('packages'), cli('packages', '--json')]);
      expectOk(human);
      expect(human.stdout).toContain('short-story  Short story');
      expect(human.stdout).toContain('- brief-writer: reads request → writes brief');
      expect(human.stdout).toContain('- drafter: reads brief, outline → writes draft  roles: literary, genre');
      expect(human.stdout).toContain('- summarize: reads note → writes summary');
      expectOk(json);
      const packages = parseJson<Array<{ id: string; workers: Array<{ id: string; inputTags: string[]; outputTags: string[] }> }>>(json);
      expect(packages.map((p) => p.id).sort()).toEqual(['file-notes', 'research-brief', 'short-story', 'tiny']);
      expect(packages.find((p) => p.id === 'tiny')!.workers).toEqual([
        expect.objectContaining({ id: 'echo', inputTags: ['request'], outputTags: ['note'] }),
        expect.objectContaining({ id: 'summarize', inputTags: ['note'], outputTags: ['summary'] }),
      ]);
    },
    CLI_TIMEOUT,
  );

  it(
    'test/support/steward-src.mjs (the CLI from the sources through tsx, as the benchmark starts it) answers as the compiled one does',
    async () => {
      const viaTsx = startCli(['packages', '--json'], { db }, [process.execPath, join(root, 'test/support/steward-src.mjs')]).result;
      const [fromSources, compiled] = await Promise.all([viaTsx, cli('packages', '--json')]);
      expectOk(fromSources);
      expectOk(compiled);
      expect(fromSources.stdout).toBe(compiled.stdout);
    },
    CLI_TIMEOUT,
  );

  it(
    'bin/steward.mjs as a process answers new, send, show, list and a failure as main() in the worker does',
    async () => {
      const inWorker = join(dir, 'in-worker.db');
      const asProcess = join(dir, 'as-process.db');
      const both = async (...args: (string | ((id: string) => string))[]) => {
        const ids = await Promise.all(
          [inWorker, asProcess].map(
            async (file) =>
              (
                await runCli(['list', '--json'], { db: file })
                  .then(parseJson<SessionSummary[]>)
                  .catch(() => [])
              )[0]?.id ?? '',
          ),
        );
        return Promise.all(
          [inWorker, asProcess].map((file, i) =>
            runCli(
              args.map((arg) => (typeof arg === 'string' ? arg : arg(ids[i]!))),
              { db: file, process: i === 1 },
            ),
          ),
        );
      };
      const same = (results: CliResult[], ids: string[] = []) => {
        const [worker, proc] = results.map((r, i) => ({ ...r, stdout: r.stdout.replaceAll(ids[i] ?? '\0', 'ID') }));
        expect(proc).toEqual(worker);
      };
      const created = await both('new', '--package', 'tiny');
      expectOk(created[1]!);
      const ids = created.map((r) => r.stdout.trim());
      expect(created[1]!.stdout).toMatch(/^s_\w+\n$/);
      same(await both('send', (id) => id, 'input', '--text', 'Say hello'), ids);
      same(await both('show', (id) => id), ids);
      expect((await both('list', '--json')).map((r) => parseJson<SessionSummary[]>(r).map((s) => s.state))).toEqual([
        ['waiting_user.approve_step'],
        ['waiting_user.approve_step'],
      ]);
      const missing = await both('show', 's_missing');
      expectFailure(missing[1]!, 'session_not_found', 's_missing');
      expect(missing[1]!.stderr.replaceAll(asProcess, 'DB')).toBe(missing[0]!.stderr.replaceAll(inWorker, 'DB'));
    },
    CLI_TIMEOUT,
  );

  it(
    'send --wait N names the wait a decision answers: the same decision again is a harmless repeat, another one is refused (wait_closed)',
    async () => {
      const id = parseJson<ViewJson>(await cli('new', '--package', 'tiny', '--json')).id;
      const asked = parseJson<ViewJson>(await cli('send', id, 'input', '--text', 'Say hello', '--wait', '1', '--json'));
      expect(asked).toMatchObject({ state: 'waiting_user.approve_step', wait: 2 });
      expectOk(await cli('send', id, 'approve', '--wait', '2', '--json'));
      const again = await cli('send', id, 'approve', '--wait', '2', '--json');
      expect(again.code, again.stderr).toBe(0);
      expect(again.stderr).toContain('Wait 2 was already answered by this same decision: nothing was applied again');
      expect(parseJson<ViewJson>(again)).toMatchObject({ state: 'waiting_user.review_artifact', wait: 3 });
      const other = await cli('send', id, 'reject-step', '--wait', '2');
      expectFailure(other, 'wait_closed', 'Wait 2 is no longer open (it was answered by another decision)');
      expect(parseJson<JournalEntry[]>(await cli('log', id, '--json')).filter((e) => e.type === 'user_approved_next_step')).toHaveLength(2);
    },
    CLI_TIMEOUT,
  );

  it(
    'new, send (aliases and full names), show, list and log take a session through its waits',
    async () => {
      const created = await cli('new', '--package', 'tiny', '--json');
      expectOk(created);
      const first = parseJson<ViewJson>(created);
      expect(first).toMatchObject({ packageId: 'tiny', state: 'waiting_user.intake', phase: 'waiting_user', waitingReason: 'intake', revision: 1 });
      expect(first.acceptedEvents).toEqual(expect.arrayContaining(['user_submitted_input', 'user_confirmed_intake']));
      const id = first.id;

      // A refused event: exit 1, the machine's reason on stderr, nothing on stdout.
      const refused = await cli('send', id, 'approve');
      expectFailure(
        refused,
        'event_refused',
        '"user_approved_next_step" is not accepted while the session waits in intake. Accepted now: user_submitted_input, user_confirmed_intake',
      );
      expect(refused.stdout).toBe('');

      const input = parseJson<ViewJson>(await cli('send', id, 'input', '--text', 'Say hello to the lighthouse', '--json'));
      expect(input).toMatchObject({ state: 'waiting_user.approve_step', pendingStep: { workerId: 'echo', requiresApproval: true } });

      // The full event name works like the alias; the human output shows the artifact's tag body.
      const approved = await cli('send', id, 'user_approved_next_step');
      expectOk(approved);
      expect(approved.stdout).toContain('Waiting for you: accept or reject artifact a1 (echo).');
      expect(approved.stdout).toContain('── Artifact a1 by echo · note v1 · demo model (no LLM) ──');
      expect(approved.stdout).toContain('- request v1: Say hello to the lighthouse');

      const rejected = parseJson<ViewJson>(await cli('send', id, 'reject', '--reason', 'Too long', '--json'));
      expect(rejected).toMatchObject({ state: 'waiting_user.revision', artifact: { id: 'a1', status: 'rejected' } });
      const revised = parseJson<ViewJson>(await cli('send', id, 'input', '--text', 'Two sentences at most', '--json'));
      expect(revised).toMatchObject({ state: 'waiting_user.review_artifact', artifact: { id: 'a2', revises: 'a1', status: 'pending_review' } });
      // Both of what the person wrote: the rejection's reason and the revision's text.
      expect(revised.artifact!.tags[0]!.body).toContain('Revised after your notes: Too long / Two sentences at most');

      const accepted = parseJson<ViewJson>(await cli('send', id, 'accept', '--json'));
      expect(accepted).toMatchObject({ state: 'waiting_user.approve_step', pendingStep: { workerId: 'summarize' } });

      const [showJson, showHuman, list, listHuman, log, logHuman] = await Promise.all([
        cli('show', id, '--json'),
        cli('show', id),
        cli('list', '--json'),
        cli('list'),
        cli('log', id, '--json'),
        cli('log', id),
      ]);
      expectOk(showJson);
      expect(parseJson<ViewJson>(showJson)).toEqual(accepted);
      expectOk(showHuman);
      expect(showHuman.stdout).toContain(`Session ${id} · package tiny · waiting_user.approve_step`);
      expect(showHuman.stdout).toContain('── Proposed step · run summarize ──');
      expect(showHuman.stdout).toContain('Artifacts: a1 echo superseded, a2 echo accepted');
      expect(showHuman.stdout).toContain('approve (user_approved_next_step), reject-step (user_rejected_next_step)');

      const sessions = parseJson<SessionSummary[]>(list);
      expect(sessions.map((s) => s.id)).toContain(id);
      expect(sessions.find((s) => s.id === id)).toMatchObject({ packageId: 'tiny', state: 'waiting_user.approve_step', revision: accepted.revision });
      expectOk(listHuman);
      expect(listHuman.stdout).toMatch(new RegExp(`${id}\\s+tiny\\s+waiting_user.approve_step\\s+${accepted.revision}`));

      const journal = parseJson<JournalEntry[]>(log);
      expect(journal.map((e) => e.seq)).toEqual(journal.map((_, i) => i + 1));
      // One write may carry several entries (those that arrive while a write is under way).
      expect(accepted.revision).toBeLessThanOrEqual(journal.at(-1)!.seq);
      expect(journal.filter((e) => e.kind === 'event').map((e) => e.type)).toEqual([
        'user_approved_next_step', // the refused one is journaled too, with the state unchanged
        'user_submitted_input',
        'user_approved_next_step',
        'user_rejected_artifact',
        'user_submitted_input',
        'user_accepted_artifact',
      ]);
      expect(journal[1]).toMatchObject({ kind: 'event', type: 'user_approved_next_step', state: 'waiting_user.intake' });
      expectOk(logHuman);
      expect(logHuman.stdout).toMatch(/^SEQ\s+AT\s+BY\s+KIND\s+TYPE\s+STATE AFTER\s+DETAIL/);
      expect(logHuman.stdout).toMatch(/user_rejected_artifact\s+waiting_user\.revision\s+\{"artifactId":"a1","reason":"Too long","wait":3\}/);
    },
    CLI_TIMEOUT,
  );

  it(
    'starts a session without a package in skill_selection; `select --package` chooses one',
    async () => {
      const created = parseJson<ViewJson>(await cli('new', '--no-package', '--json'));
      expect(created).toMatchObject({ state: 'waiting_user.skill_selection', packageId: null, acceptedEvents: ['user_selected_package'] });
      const selected = await cli('send', created.id, 'select', '--package', 'tiny', '--json');
      expectOk(selected);
      expect(parseJson<ViewJson>(selected)).toMatchObject({ state: 'waiting_user.intake', packageId: 'tiny' });
    },
    CLI_TIMEOUT,
  );

  it(
    'fails with a clear message and exit 1, never a stack trace',
    async () => {
      const plain = await cli('new', '--package', 'tiny');
      expectOk(plain);
      expect(plain.stdout).toMatch(/^s_\w+\n$/);
      const id = plain.stdout.trim();
      const [unknownSession, badJson, unknownEvent, wrongOption, refusedJson, unknownPackage] = await Promise.all([
        cli('log', 'nope', '--json'),
        cli('send', id, 'answer', '--answers', '{q1: yes}'),
        cli('send', id, 'frobnicate'),
        cli('send', id, 'approve', '--text', 'hi'),
        cli('send', id, 'reject-step', '--reason', 'no', '--json'),
        cli('new', '--package', 'nope'),
      ]);
      expectFailure(unknownSession, 'session_not_found', `No session "nope" in the store ${db}. List the sessions with \`steward list --db ${db}\``);
      expect(parseJson(unknownSession)).toEqual({ error: { code: 'session_not_found', message: expect.stringContaining('No session "nope"') } });
      expectFailure(badJson, 'usage', /--answers must be a JSON object of question ids to answers.*got invalid JSON/);
      expectFailure(unknownEvent, 'usage', 'Unknown event "frobnicate". Events: input (user_submitted_input), confirm');
      expectFailure(wrongOption, 'usage', '--text does not apply to user_approved_next_step (it takes --item, --reason, --role).');
      expectFailure(refusedJson, 'event_refused', '"user_rejected_next_step" is not accepted while the session waits in intake.');
      expect(parseJson(refusedJson)).toMatchObject({ error: { code: 'event_refused' } });
      expectFailure(unknownPackage, 'user_error', 'Unknown package "nope". Packages: ');
    },
    CLI_TIMEOUT,
  );

  it(
    'refuses a session id that breaks the id rule (arguments and --session) with exit 1, naming the rule, never echoing it raw',
    async () => {
      const titleEscape = 'a\u001b]0;owned\u0007b';
      const results = await Promise.all([
        cli('show', ''),
        cli('log', 'x'.repeat(201)),
        cli('send', titleEscape, 'approve'),
        cli('resume', 'a\u202eb'),
        cli('fork', 'a\nb', '--at', '1'),
        cli('run', '--session', titleEscape),
      ]);
      for (const result of results) {
        expectFailure(result, 'invalid_session_id', /a session id has 1 to 200 characters, none of them a control or invisible character/);
        // eslint-disable-next-line no-control-regex -- no control character may reach the terminal: the regex names them
        expect(result.stderr).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f\u202e]/);
      }
      expect(results[0]!.stderr).toContain('steward show: the session id is empty');
      expect(results[5]!.stderr).toContain('--session: character 2 of the session id is U+001B');
    },
    CLI_TIMEOUT,
  );
});
