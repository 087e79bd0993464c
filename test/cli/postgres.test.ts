/**
 * The real `steward` command with STEWARD_DB=postgres://… (or --db): a story from intake
 * to done on the demo model, the scriptable commands, a SIGKILL during a model call and the
 * resume (`steward run --session ID`, as test/cli/crash.test.ts does on SQLite), and the
 * error a wrong URL ends with. The server is real (test/support/postgres.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ViewJson } from '../../src/cli/context.js';
import type { Blackboard } from '../../src/index.js';
import type { JournalEntry, SessionSummary } from '../../src/store.js';
import { PostgresStore } from '../../src/store/postgres-store.js';
import { startFakeOpenAI, type FakeOpenAI, type FakeStep } from '../support/fake-openai-server.js';
import { parseJson, runCli, startCli, until } from '../support/cli-process.js';
import { postgresUnavailable, TEST_PASSWORD } from '../support/postgres.js';
import { usePostgres } from '../support/use-postgres.js';
import { closedPort } from '../support/temp.js';

/** Generous: child processes start slowly on a busy machine. */
const CLI_TIMEOUT = 90_000;

const server = usePostgres();

const fakes: FakeOpenAI[] = [];
afterEach(async () => {
  await Promise.all(fakes.splice(0).map((f) => f.close()));
});

const reply = (name: string, args: unknown): FakeStep => ({ reply: { toolCalls: [{ name, arguments: JSON.stringify(args) }] } });
const blackboardOf = (snapshot: unknown) => (snapshot as { snapshot: { context: { blackboard: Blackboard } } }).snapshot.context.blackboard;

describe.skipIf(postgresUnavailable !== null)('steward on PostgreSQL', () => {
  it(
    'runs the story from intake to done with STEWARD_DB=postgres://…; list, show and log read it back',
    async () => {
      const db = await server.createDatabase();
      const run = await runCli(['run', '--package', 'short-story'], { db, timeoutMs: 60_000 });
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('package short-story · model: demo model (no LLM)');
      const id = /session (s_\w+)/.exec(run.stdout)![1]!;
      expect(run.stdout).toMatch(/Session s_\w+ is done \(14 model rounds\)/);

      const [list, show, log] = await Promise.all([
        runCli(['list', '--json'], { db }),
        runCli(['show', id, '--json'], { db }),
        runCli(['log', id, '--json'], { db }),
      ]);
      expect(parseJson<SessionSummary[]>(list)).toEqual([expect.objectContaining({ id, packageId: 'short-story', state: 'done' })]);
      expect(parseJson<ViewJson>(show)).toMatchObject({ id, state: 'done', phase: 'done' });
      const journal = parseJson<JournalEntry[]>(log);
      expect(journal.map((e) => e.seq)).toEqual(journal.map((_, i) => i + 1));
      expect(journal.at(-1)!.state).toBe('done');

      // Written where the URL says: another client sees the same rows.
      const store = new PostgresStore(db);
      try {
        expect((await store.load(id))?.revision).toBe(parseJson<ViewJson>(show).revision);
        expect(await store.journal(id)).toEqual(journal);
      } finally {
        await store.close();
      }
    },
    CLI_TIMEOUT,
  );

  it(
    '--db postgres://… wins over STEWARD_DB; new and send work on it',
    async () => {
      const url = await server.createDatabase();
      // STEWARD_DB names a database that does not exist: only --db may be used.
      const other = new URL(url);
      other.pathname = '/not_this_one';
      const opts = { db: other.toString() };
      const created = parseJson<ViewJson>(await runCli(['--db', url, 'new', '--package', 'tiny', '--json'], opts));
      expect(created).toMatchObject({ state: 'waiting_user.intake', revision: 1 });
      const sent = await runCli(['--db', url, 'send', created.id, 'input', '--text', 'Hello', '--json'], opts);
      expect(sent.stderr).toBe('');
      expect(parseJson<ViewJson>(sent)).toMatchObject({ state: 'waiting_user.approve_step', pendingStep: { workerId: 'echo' } });
    },
    CLI_TIMEOUT,
  );

  it(
    'a wrong URL ends with one line that names the problem and the fix, never the password',
    async () => {
      const port = await closedPort();
      const unreachable = await runCli(['list'], { db: `postgres://app:s3cret-pw@127.0.0.1:${port}/steward` });
      expect(unreachable.code).toBe(1);
      expect(unreachable.stderr).toBe(
        `steward [store_unavailable]: Cannot reach the PostgreSQL server at postgres://app@127.0.0.1:${port}/steward (ECONNREFUSED). ` +
          'Start the server, or fix the host and port. Check STEWARD_DB (or --db): postgres://USER:PASSWORD@HOST:PORT/DATABASE.\n',
      );

      const url = new URL(await server.createDatabase());
      url.password = 'not-the-password';
      const refused = await runCli(['list'], { db: url.toString() });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(
        /^steward \[store_unavailable\]: PostgreSQL at postgres:\/\/postgres@127\.0\.0\.1:\d+\/steward_test_\w+ refused the login: password authentication failed/,
      );
      expect(refused.stderr).not.toContain('not-the-password');

      url.password = TEST_PASSWORD;
      url.pathname = '/missing_db';
      const missing = await runCli(['show', 'x'], { db: url.toString() });
      expect(missing.code).toBe(1);
      expect(missing.stderr).toMatch(/has no such database: database "missing_db" does not exist\. Create it/);
      expect(missing.stderr).not.toContain(TEST_PASSWORD);
    },
    CLI_TIMEOUT,
  );

  it(
    'SIGKILL during a model call, then `steward resume`: nothing accepted is lost and the call runs again',
    async () => {
      const db = await server.createDatabase();
      const before = await startFakeOpenAI([
        reply('read_blackboard', { tags: ['request'] }),
        reply('run_worker', { workerId: 'echo', reason: 'Restate the request.', requiresApproval: true }),
        // The worker's call: still in flight when the process dies.
        { delayMs: 60_000, then: reply('submit', { outputs: { note: 'never delivered' } }) },
      ]);
      fakes.push(before);
      const env = { OPENAI_BASE_URL: before.baseURL, STEWARD_MODEL: 'fake-model' };
      // The run holds the session's lease while it runs: a short one, so the test need not wait long after the kill.
      const first = startCli(['run', '--package', 'tiny', '--request', 'A lighthouse that remembers'], { db, env: { ...env, STEWARD_LEASE_MS: '2000' } });
      const id = await until(() => /session (s_\w+)/.exec(first.stdout)?.[1], 'the session id');
      await until(() => before.requests.length === 3, 'the worker call to be in flight');

      const store = new PostgresStore(db);
      try {
        await until(async () => (await store.journal(id)).at(-1)?.state === 'running.worker.thinking', 'the approval to be saved');
        expect(await store.leases.holder(id)).toMatchObject({ owner: expect.stringMatching(/^steward run on \S+ pid \d+$/) });
        first.child.kill('SIGKILL');
        expect((await first.result).signal).toBe('SIGKILL');
        // Its lease runs out by itself (nobody renews it any more).
        await until(async () => (await store.leases.holder(id)) === null, "the dead run's lease to run out");
        const journalBefore = await store.journal(id);
        const blackboardBefore = blackboardOf((await store.load(id))!.snapshot);
        expect(journalBefore.map((e) => e.state)).toEqual([
          'waiting_user.intake',
          'running.manager.thinking',
          'running.manager.thinking',
          'waiting_user.approve_step',
          'running.worker.thinking',
        ]);

        // A one-shot send refuses while it looks running, and names the resume command
        // with PASSWORD in place of the password.
        const busy = await runCli(['send', id, 'approve'], { db });
        expect(busy.code).toBe(1);
        expect(busy.stderr).toContain(`continue it with: steward resume ${id} --db postgres://postgres:PASSWORD@127.0.0.1:`);
        expect(busy.stderr).not.toContain(TEST_PASSWORD);

        const after = await startFakeOpenAI([
          reply('submit', { outputs: { note: 'A lighthouse keeps its memories.' } }),
          reply('run_worker', { workerId: 'summarize', reason: 'Summarize the note.', requiresApproval: true }),
          reply('submit', { outputs: { summary: 'A remembering lighthouse.' } }),
          reply('finish', { summary: 'The note and its summary are ready.' }),
        ]);
        fakes.push(after);
        // `steward resume` re-runs the interrupted call and stops at the next wait…
        const continued = await runCli(['resume', id, '--json'], { db, env: { ...env, OPENAI_BASE_URL: after.baseURL } });
        expect(continued.stderr).toBe('');
        expect(continued.code).toBe(0);
        expect((JSON.parse(continued.stdout) as { state: string }).state).toBe('waiting_user.review_artifact');
        // …and `steward run --session` plays the user from there to the end.
        const resumed = await runCli(['run', '--session', id], { db, env: { ...env, OPENAI_BASE_URL: after.baseURL } });
        expect(resumed.stderr).toBe('');
        expect(resumed.code).toBe(0);
        expect(resumed.stdout).toContain('── Summary · fake-model ──\nThe note and its summary are ready.');
        expect((after.requests[0] as { messages: unknown }).messages).toEqual((before.requests[2] as { messages: unknown }).messages);
        expect(after.unexpected).toEqual([]);

        const journalAfter = await store.journal(id);
        expect(journalAfter.map((e) => e.seq)).toEqual(journalAfter.map((_, i) => i + 1));
        expect(journalAfter.slice(0, journalBefore.length)).toEqual(journalBefore);
        expect(journalAfter.at(-1)!.state).toBe('done');
        const blackboardAfter = blackboardOf((await store.load(id))!.snapshot);
        for (const [tag, versions] of Object.entries(blackboardBefore)) expect(blackboardAfter[tag]!.slice(0, versions.length)).toEqual(versions);
        expect(blackboardAfter.note?.map((v) => ('body' in v ? v.body : null))).toEqual(['A lighthouse keeps its memories.']);
      } finally {
        await store.close();
      }
    },
    CLI_TIMEOUT,
  );
});
