/**
 * A crash in the middle of a model call: `steward run` works against a fake OpenAI server
 * and is killed with SIGKILL while the worker's call is in flight. `steward run --session`
 * then resumes it: every journal entry and blackboard version written before the crash is
 * intact, the in-flight call is made again (same messages), and the session reaches done.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { SqliteStore, type Blackboard } from '../../src/index.js';
import { startFakeOpenAI, type FakeOpenAI, type FakeStep } from '../support/fake-openai-server.js';
import { startCli, until } from '../support/cli-process.js';

/** Generous: child processes start slowly on a busy machine. */
const CLI_TIMEOUT = 90_000;

const reply = (name: string, args: unknown): FakeStep => ({ reply: { toolCalls: [{ name, arguments: JSON.stringify(args) }] } });

let dir: string;
let db: string;
const servers: FakeOpenAI[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'steward-crash-'));
  db = join(dir, 'steward.db');
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  rmSync(dir, { recursive: true, force: true });
});

type Body = { model: string; messages: unknown[]; tools?: unknown[] };
const blackboardOf = (snapshot: unknown) => (snapshot as { snapshot: { context: { blackboard: Blackboard } } }).snapshot.context.blackboard;

it(
  'resumes a session killed mid-call: nothing accepted is lost and the call runs again',
  async () => {
    const before = await startFakeOpenAI([
      reply('read_blackboard', { tags: ['request'] }),
      reply('run_worker', { workerId: 'echo', reason: 'Restate the request.', requiresApproval: true }),
      // The worker's call: still in flight when the process dies.
      { delayMs: 60_000, then: reply('submit', { outputs: { note: 'never delivered' } }) },
    ]);
    servers.push(before);
    const env = { OPENAI_BASE_URL: before.baseURL, STEWARD_MODEL: 'fake-model' };
    const first = startCli(['run', '--package', 'tiny', '--request', 'A lighthouse that remembers'], { db, env });
    const id = await until(() => /session (s_\w+)/.exec(first.stdout)?.[1], 'the session id');
    await until(() => before.requests.length === 3, 'the worker call to be in flight');

    const store = new SqliteStore(db);
    try {
      // The approval that started the worker is saved before the process dies.
      await until(async () => (await store.journal(id)).at(-1)?.state === 'running.worker.thinking', 'the approval to be saved');
      first.child.kill('SIGKILL');
      const killed = await first.result;
      expect(killed.signal).toBe('SIGKILL');
      expect(first.stdout).toContain('… Worker echo writing · burst 1/12 · fake-model');

      const journalBefore = await store.journal(id);
      const blackboardBefore = blackboardOf((await store.load(id))!.snapshot);
      expect(journalBefore.map((e) => [e.type, e.state])).toEqual([
        ['created', 'waiting_user.intake'],
        ['user_submitted_input', 'running.manager.thinking'],
        ['xstate.done.actor.managerTurn', 'running.manager.thinking'],
        ['xstate.done.actor.managerTurn', 'waiting_user.approve_step'],
        ['user_approved_next_step', 'running.worker.thinking'],
      ]);
      expect(blackboardBefore.request?.map((v) => ('body' in v ? v.body : null))).toEqual(['A lighthouse that remembers']);

      const after = await startFakeOpenAI([
        reply('submit', { outputs: { note: 'A lighthouse keeps its memories.' } }),
        reply('run_worker', { workerId: 'summarize', reason: 'Summarize the note.', requiresApproval: true }),
        reply('submit', { outputs: { summary: 'A remembering lighthouse.' } }),
        reply('finish', { summary: 'The note and its summary are ready.' }),
      ]);
      servers.push(after);
      const resumed = await startCli(['run', '--session', id], { db, env: { ...env, OPENAI_BASE_URL: after.baseURL } }).result;
      expect(resumed.stderr).toBe('');
      expect(resumed.code).toBe(0);
      expect(resumed.stdout).toContain(`Resuming ${id} in running.worker.thinking: the interrupted model call runs again.`);
      expect(resumed.stdout).toContain('── Artifact a1 by echo · note v1 · fake-model ──\nA lighthouse keeps its memories.');
      expect(resumed.stdout).toContain('── Summary · fake-model ──\nThe note and its summary are ready.');

      // The in-flight call was made again, with the same conversation.
      const inFlight = before.requests[2] as Body;
      const retried = after.requests[0] as Body;
      expect(retried.messages).toEqual(inFlight.messages);
      expect(retried.tools).toEqual(inFlight.tools);
      expect(before.unexpected).toEqual([]);
      expect(after.unexpected).toEqual([]);
      expect(after.requests).toHaveLength(4);

      const journalAfter = await store.journal(id);
      expect(journalAfter.map((e) => e.seq)).toEqual(journalAfter.map((_, i) => i + 1));
      expect(journalAfter.slice(0, journalBefore.length)).toEqual(journalBefore);
      expect(journalAfter.at(-1)!.state).toBe('done');
      const blackboardAfter = blackboardOf((await store.load(id))!.snapshot);
      for (const [tag, versions] of Object.entries(blackboardBefore)) {
        expect(blackboardAfter[tag]!.slice(0, versions.length)).toEqual(versions);
      }
      expect(blackboardAfter.note?.map((v) => ('body' in v ? v.body : null))).toEqual(['A lighthouse keeps its memories.']);
    } finally {
      await store.close();
    }
  },
  CLI_TIMEOUT,
);
