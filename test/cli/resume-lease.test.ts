/**
 * `steward resume` on PostgreSQL after a `steward send` died mid model call, its session's
 * lease still unexpired. A holder on this machine whose process is gone (checked by pid and
 * by the process's start time) is taken over at once; a live one, one on another host, or a
 * holder written without its process is not, and resume waits for its lease to run out
 * (`--fail-fast`: fails at once, saying until when the lease is held and by whom).
 *
 * Leases here last 5 minutes and no command may take a minute: a resume that succeeds did
 * not wait for one to run out. Outcomes are asserted, never durations.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import type { ViewJson } from '../../src/cli/context.js';
import { PostgresStore } from '../../src/store/postgres-store.js';
import { parseJson, runCli, startCli, until } from '../support/cli-process.js';
import { startFakeOpenAI, type FakeOpenAI, type FakeStep } from '../support/fake-openai-server.js';
import { postgresUnavailable } from '../support/postgres.js';
import { usePostgres } from '../support/use-postgres.js';

const LEASE_MS = 300_000;
/** Generous: child processes start slowly on a busy machine; still far below a lease. */
const CLI_TIMEOUT = 60_000;
const TEST_TIMEOUT = 150_000;

const server = usePostgres();
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const reply = (name: string, args: unknown): FakeStep => ({ reply: { toolCalls: [{ name, arguments: JSON.stringify(args) }] } });

async function fakeModel(script: FakeStep[]): Promise<FakeOpenAI> {
  const fake = await startFakeOpenAI(script);
  cleanups.push(() => fake.close());
  return fake;
}

const envOf = (fake: FakeOpenAI, extra: Record<string, string> = {}) => ({ OPENAI_BASE_URL: fake.baseURL, STEWARD_MODEL: 'fake-model', ...extra });

/** Field 22 of /proc/PID/stat (after the command name, which may hold spaces and parentheses): clock ticks since boot. */
function startTicksOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
}

/** This machine as a lease row records it, for a made-up holder. */
const here = () => ({
  host: hostname(),
  bootId: readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim(),
  pidNamespace: readlinkSync('/proc/self/ns/pid'),
});

/** A pid no process can have (above the kernel's limit). */
const impossiblePid = () => Number(readFileSync('/proc/sys/kernel/pid_max', 'utf8').trim()) + 1;

/** A process that lives until the test ends. */
function liveProcess(): ChildProcess & { pid: number } {
  const child = spawn('sleep', ['600'], { stdio: 'ignore' });
  cleanups.push(() => void child.kill('SIGKILL'));
  return child as ChildProcess & { pid: number };
}

/**
 * A `tiny` session whose `steward send` was SIGKILLed during its model call: stored as
 * running, its lease held by the dead send for LEASE_MS more.
 */
async function killedMidCall(db: string): Promise<{ id: string; before: FakeOpenAI; deadPid: number }> {
  const created = parseJson<ViewJson>(await runCli(['new', '--package', 'tiny', '--json'], { db }));
  const before = await fakeModel([{ delayMs: 600_000, then: reply('read_blackboard', { tags: ['request'] }) }]);
  const send = startCli(['send', created.id, 'input', '--text', 'A lighthouse that remembers', '--json'], {
    db,
    env: envOf(before, { STEWARD_LEASE_MS: String(LEASE_MS) }),
    timeoutMs: CLI_TIMEOUT,
  });
  await until(() => before.requests.length === 1, "the send's model call to be in flight", CLI_TIMEOUT);
  const store = new PostgresStore(db);
  try {
    await until(async () => (await store.journal(created.id)).at(-1)?.state.startsWith('running'), 'the session to be saved running');
    // The lease names the send, for people, and records its process, for a resume on this machine.
    expect(await store.leases.holder(created.id)).toMatchObject({
      owner: `steward send on ${hostname()} pid ${send.child.pid}`,
      process: { ...here(), pid: send.child.pid, startTicks: expect.any(Number) },
    });
  } finally {
    await store.close();
  }
  send.child.kill('SIGKILL');
  expect((await send.result).signal).toBe('SIGKILL');
  return { id: created.id, before, deadPid: send.child.pid! };
}

/** Rewrites the session's lease row as if `owner` (running as `process`, or unknown: null) held it for `seconds` more. */
async function pretendHolder(db: string, id: string, owner: string, process: object | null, seconds = LEASE_MS / 1000): Promise<void> {
  const client = new pg.Client({ connectionString: db });
  await client.connect();
  try {
    // The process is recorded with the grant it belongs to (a row's token moves on with each grant).
    const { rowCount } = await client.query(
      `UPDATE steward.leases SET owner = $2, process = $3::jsonb || jsonb_build_object('token', token), expires_at = now() + $4 * interval '1 second'
       WHERE session_id = $1`,
      [id, owner, process === null ? null : JSON.stringify(process), seconds],
    );
    expect(rowCount).toBe(1);
  } finally {
    await client.end();
  }
}

/** The replies that take a resumed `tiny` session from its first manager call to the approval of a step. */
const toApproval = () => [
  reply('read_blackboard', { tags: ['request'] }),
  reply('run_worker', { workerId: 'echo', reason: 'Restate the request.', requiresApproval: true }),
];

describe.skipIf(postgresUnavailable !== null)('steward resume on PostgreSQL, its lease held by a process that died', () => {
  it(
    'a `steward send` SIGKILLed mid call on this machine: `steward resume` takes its lease over at once and the session moves on',
    async () => {
      const db = await server.createDatabase();
      const { id, before } = await killedMidCall(db);

      const after = await fakeModel([...toApproval(), reply('submit', { outputs: { note: 'A lighthouse keeps its memories.' } })]);
      const resumed = await runCli(['resume', id, '--json'], { process: true, db, env: envOf(after), timeoutMs: CLI_TIMEOUT });
      expect(resumed.stderr).toBe('');
      expect(resumed.code).toBe(0);
      expect(JSON.parse(resumed.stdout)).toMatchObject({ id, state: 'waiting_user.approve_step' });
      // The interrupted call ran again, from the same input.
      expect((after.requests[0] as { messages: unknown }).messages).toEqual((before.requests[0] as { messages: unknown }).messages);
      expect(after.unexpected).toEqual([]);

      // It let the lease go at the wait: the next send runs at once.
      const approved = await runCli(['send', id, 'approve', '--json'], { process: true, db, env: envOf(after), timeoutMs: CLI_TIMEOUT });
      expect(approved.stderr).toBe('');
      expect(JSON.parse(approved.stdout)).toMatchObject({ id, waitingReason: 'review_artifact' });
    },
    TEST_TIMEOUT,
  );

  it(
    'a holder on this machine whose pid is alive is taken over only when that pid is a new process (another start time)',
    async () => {
      const db = await server.createDatabase();
      const { id } = await killedMidCall(db);
      const live = liveProcess();
      const owner = `steward send on ${hostname()} pid ${live.pid}`;

      // The pid and its start time are those of a live process: it holds the session.
      await pretendHolder(db, id, owner, { ...here(), pid: live.pid, startTicks: startTicksOf(live.pid) });
      const after = await fakeModel(toApproval());
      const refused = await runCli(['resume', id, '--fail-fast'], { process: true, db, env: envOf(after), timeoutMs: CLI_TIMEOUT });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(`steward [session_running_elsewhere]: Session "${id}" is held by ${owner}`);
      expect(after.requests).toEqual([]);

      // The same pid, started at another time: the holder died and its pid was given to another process.
      await pretendHolder(db, id, owner, { ...here(), pid: live.pid, startTicks: startTicksOf(live.pid) + 1 });
      const resumed = await runCli(['resume', id, '--json'], { process: true, db, env: envOf(after), timeoutMs: CLI_TIMEOUT });
      expect(resumed.stderr).toBe('');
      expect(resumed.code).toBe(0);
      expect(JSON.parse(resumed.stdout)).toMatchObject({ id, state: 'waiting_user.approve_step' });
    },
    TEST_TIMEOUT,
  );

  it(
    'a holder on another host, or one that recorded no process, is not taken over: --fail-fast fails at once; without it resume waits for the lease',
    async () => {
      const db = await server.createDatabase();
      const { id } = await killedMidCall(db);
      const after = await fakeModel(toApproval());

      // Another host: no pid there can be checked from here (not even one that cannot exist here).
      const elsewhere = 'steward send on web-7 pid 4242';
      await pretendHolder(db, id, elsewhere, { ...here(), host: 'web-7', pid: impossiblePid(), startTicks: 1 });
      const refused = await runCli(['resume', id, '--fail-fast'], { process: true, db, env: envOf(after), timeoutMs: CLI_TIMEOUT });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(
        new RegExp(
          `^steward \\[session_running_elsewhere\\]: Session "${id}" is held by ${elsewhere}: its lease runs \\d+ more seconds, until \\d\\d:\\d\\d:\\d\\d UTC`,
        ),
      );
      expect(refused.stderr).toContain('on another host');
      expect(refused.stderr).not.toContain('right now');

      // An older Steward's lease records no process: it cannot be checked either.
      await pretendHolder(db, id, `steward send on ${hostname()} pid ${impossiblePid()}`, null);
      const old = await runCli(['resume', id, '--fail-fast'], { process: true, db, env: envOf(after), timeoutMs: CLI_TIMEOUT });
      expect(old.code).toBe(1);
      expect(old.stderr).toContain('[session_running_elsewhere]');

      // `steward send` says the same of a running session it cannot send to.
      const send = await runCli(['send', id, 'approve'], { process: true, db, timeoutMs: CLI_TIMEOUT });
      expect(send.code).toBe(1);
      expect(send.stderr).toContain(`steward [session_running_elsewhere]: Session "${id}" is held by steward send on`);

      // Without --fail-fast, resume says how long it waits, and goes on once the lease is over
      // (here it is ended early, as its holder's releasing it would).
      await pretendHolder(db, id, elsewhere, { ...here(), host: 'web-7', pid: impossiblePid(), startTicks: 1 });
      const waiting = startCli(['resume', id, '--json'], { db, env: envOf(after), timeoutMs: CLI_TIMEOUT });
      waiting.result.catch(() => {}); // awaited below, unless the test fails first
      cleanups.push(() => void waiting.child.kill('SIGKILL'));
      await until(() => waiting.stderr.includes('Waiting up to'), 'resume to say it waits', CLI_TIMEOUT);
      expect(waiting.stderr).toMatch(new RegExp(`^Waiting up to \\d+ s for the lease held by ${elsewhere} to run out \\(--fail-fast: fail at once\\)`));
      expect(after.requests).toEqual([]);
      await pretendHolder(db, id, elsewhere, { ...here(), host: 'web-7', pid: impossiblePid(), startTicks: 1 }, 0);
      const resumed = await waiting.result;
      expect(resumed.code).toBe(0);
      expect(JSON.parse(resumed.stdout)).toMatchObject({ id, state: 'waiting_user.approve_step' });
    },
    TEST_TIMEOUT,
  );
});
