/**
 * `steward resume ID [--json]`: a session left `running` by a crash (SIGKILL during a model
 * call) is brought to its next wait: the in-flight call runs again and the view is printed
 * (`--json`: the same JSON as `send --json`). On a session that already waits it only prints
 * the view. `send` to such a session names the command.
 */
import { expect, it, afterEach } from 'vitest';
import type { ViewJson } from '../../src/cli/context.js';
import { SqliteStore } from '../../src/index.js';
import { startFakeOpenAI, type FakeOpenAI, type FakeStep } from '../support/fake-openai-server.js';
import { parseJson, runCli, startCli, until } from '../support/cli-process.js';
import { useTempDir } from '../support/temp.js';

const CLI_TIMEOUT = 90_000;
const tmp = useTempDir('steward-resume-');
const reply = (name: string, args: unknown): FakeStep => ({ reply: { toolCalls: [{ name, arguments: JSON.stringify(args) }] } });
const servers: FakeOpenAI[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

it(
  'resume brings a session killed mid-call to its next wait and prints the view; send names resume',
  async () => {
    const db = tmp.path('crash.db');
    const before = await startFakeOpenAI([
      reply('run_worker', { workerId: 'echo', reason: 'Restate the request.', requiresApproval: false }),
      { delayMs: 60_000, then: reply('submit', { outputs: { note: 'never delivered' } }) },
    ]);
    servers.push(before);
    const env = { OPENAI_BASE_URL: before.baseURL, STEWARD_MODEL: 'fake-model' };
    const first = startCli(['run', '--package', 'tiny', '--request', 'A lighthouse'], { db, env });
    const id = await until(() => /session (s_\w+)/.exec(first.stdout)?.[1], 'the session id');
    await until(() => before.requests.length === 2, 'the worker call to be in flight');
    const store = new SqliteStore(db, { readOnly: true });
    try {
      await until(async () => (await store.load(id)) && (await store.journal(id)).at(-1)?.state === 'running.worker.thinking', 'the step to be saved');
    } finally {
      await store.close();
    }
    first.child.kill('SIGKILL');
    await first.result;

    const send = await runCli(['send', id, 'input', '--text', 'Are you there?'], { db, env });
    expect(send.code).toBe(1);
    expect(send.stderr).toContain(`continue it with: steward resume ${id} --db ${db}`);

    const after = await startFakeOpenAI([reply('submit', { outputs: { note: 'A lighthouse keeps its memories.' } })]);
    servers.push(after);
    const resumed = await runCli(['resume', id, '--json'], { db, env: { ...env, OPENAI_BASE_URL: after.baseURL } });
    expect(resumed.stderr).toBe('');
    expect(resumed.code).toBe(0);
    const view = parseJson<ViewJson>(resumed);
    expect(view).toMatchObject({ id, state: 'waiting_user.review_artifact', phase: 'waiting_user', artifact: { id: 'a1' } });
    expect(typeof view.revision).toBe('number');
    expect(after.requests).toHaveLength(1);
    expect(after.unexpected).toEqual([]);

    // Already waiting: the view again, no model call, exit 0; the human form too.
    const again = await runCli(['resume', id], { db, env: { ...env, OPENAI_BASE_URL: after.baseURL } });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('Waiting for you: accept or reject artifact a1 (echo).');
    expect(after.requests).toHaveLength(1);
    const shown = parseJson<ViewJson>(await runCli(['show', id, '--json'], { db }));
    expect(shown).toEqual(view);
  },
  CLI_TIMEOUT,
);

it(
  'resume of an unknown session names the store',
  async () => {
    const db = tmp.path('empty.db');
    await runCli(['new', '--package', 'tiny'], { db });
    const missing = await runCli(['resume', 's_nope'], { db });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`steward [session_not_found]: No session "s_nope" in the store ${db}.`);
  },
  CLI_TIMEOUT,
);
