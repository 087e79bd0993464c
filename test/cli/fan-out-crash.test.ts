/**
 * A crash in the middle of a fan-out: `steward run` runs three independent workers at once
 * against a fake OpenAI server and is killed with SIGKILL once two of them have finished and
 * the third's call is in flight. `steward run --session` resumes it: only the unfinished
 * branch calls the model again, and the session reaches done with all three artifacts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { SqliteStore } from '../../src/index.js';
import { startFakeOpenAI, type FakeOpenAI, type FakeStep } from '../support/fake-openai-server.js';
import { startCli, until } from '../support/cli-process.js';
import { TRIO, trioPackage } from '../support/trio-package.js';

/** Generous: child processes start slowly on a busy machine. */
const CLI_TIMEOUT = 90_000;

let dir: string;
let db: string;
const servers: FakeOpenAI[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'steward-fan-out-crash-'));
  db = join(dir, 'steward.db');
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  rmSync(dir, { recursive: true, force: true });
});

type Body = { messages: { content?: unknown }[] };
const reply = (name: string, args: unknown, id: string): FakeStep => ({ reply: { toolCalls: [{ name, arguments: JSON.stringify(args), id }] } });

/** The trio worker a request is for, or null for the manager. */
function workerOf(body: unknown): string | null {
  const text = (body as Body).messages.map((m) => (typeof m.content === 'string' ? m.content : '')).join('\n');
  return /WORKER (\w+)/.exec(text)?.[1] ?? null;
}

/** Counts the calls by agent; `hang` workers never answer (their call stays in flight). */
function trioServer(hang: readonly string[], managerSteps: FakeStep[]) {
  const calls = new Map<string, number>();
  const script = async (body: unknown): Promise<FakeStep> => {
    const who = workerOf(body) ?? 'manager';
    calls.set(who, (calls.get(who) ?? 0) + 1);
    if (who === 'manager') return managerSteps.shift() ?? reply('finish', { summary: 'Three notes.' }, 'finish_1');
    const submit = reply('submit', { outputs: { [who]: `The ${who} note.` } }, `submit_${who}`);
    return hang.includes(who) ? { delayMs: 60_000, then: submit } : submit;
  };
  return { calls, script };
}

it(
  'resumes a fan-out killed with two of three branches finished: only the third calls the model again',
  async () => {
    const packages = trioPackage(join(dir, 'pkgs'));
    const runAll = {
      reply: {
        toolCalls: TRIO.map((id) => ({
          name: 'run_worker',
          arguments: JSON.stringify({ workerId: id, reason: `The ${id} note.`, requiresApproval: false }),
          id: `run_${id}`,
        })),
      },
    };
    const first = trioServer(['east'], [runAll]);
    const before = await startFakeOpenAI(first.script);
    servers.push(before);
    const env = { OPENAI_BASE_URL: before.baseURL, STEWARD_MODEL: 'fake-model' };
    const running = startCli(['run', '--packages', packages, '--package', 'trio', '--request', 'Notes from three sides'], { db, env });
    const id = await until(() => /session (s_\w+)/.exec(running.stdout)?.[1], 'the session id');

    const store = new SqliteStore(db);
    try {
      // North and south have answered, and their results are journalled; east's call is in flight.
      await until(async () => {
        const types = (await store.journal(id)).map((e) => e.type);
        return types.includes('xstate.done.actor.branch:run_north') && types.includes('xstate.done.actor.branch:run_south') && first.calls.get('east') === 1;
      }, 'two branches finished and the third in flight');
      running.child.kill('SIGKILL');
      expect((await running.result).signal).toBe('SIGKILL');
      const journalBefore = await store.journal(id);
      expect(journalBefore.at(-1)!.state).toBe('running.team.working');

      const second = trioServer([], []);
      const after = await startFakeOpenAI(second.script);
      servers.push(after);
      const resumed = await startCli(['run', '--packages', packages, '--session', id], { db, env: { ...env, OPENAI_BASE_URL: after.baseURL } }).result;
      expect(resumed.stderr).toBe('');
      expect(resumed.code).toBe(0);
      // Only the unfinished branch ran again; then the manager finished.
      expect(Object.fromEntries(second.calls)).toEqual({ east: 1, manager: 1 });

      const journalAfter = await store.journal(id);
      expect(journalAfter.slice(0, journalBefore.length)).toEqual(journalBefore);
      expect(journalAfter.at(-1)!.state).toBe('done');
      const artifacts = (await store.load(id))!.snapshot as { snapshot: { context: { artifacts: { workerId: string; status: string }[] } } };
      const byWorker = artifacts.snapshot.context.artifacts.map((a) => [a.workerId, a.status]).sort();
      expect(byWorker).toEqual(TRIO.map((t) => [t, 'accepted']).sort());
    } finally {
      await store.close();
    }
  },
  CLI_TIMEOUT,
);
