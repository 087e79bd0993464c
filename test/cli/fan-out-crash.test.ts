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
import type { FakeOpenAI } from '../support/fake-openai-server.js';
import { proposeTrio, startTrioServer } from '../support/trio-openai.js';
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

it(
  'resumes a fan-out killed with two of three branches finished: only the third calls the model again',
  async () => {
    const packages = trioPackage(join(dir, 'pkgs'));
    const first = await startTrioServer([proposeTrio(false)], { hang: ['east'] });
    servers.push(first.server);
    const running = startCli(['run', '--packages', packages, '--package', 'trio', '--request', 'Notes from three sides'], { db, env: first.env });
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

      const second = await startTrioServer([]);
      servers.push(second.server);
      const resumed = await startCli(['run', '--packages', packages, '--session', id], { db, env: second.env }).result;
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
