/**
 * The approval policy: the worker's front matter `approval: always | never | model` and the
 * runtime's `approval` option decide whether a proposed step waits for a person, not only the
 * manager's requiresApproval; the manager's tool result and the view say what was decided and why.
 */
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRuntime, MemoryStore } from '../../src/index.js';
import { bundledPackagesDir, loadPackages } from '../../src/skills/index.js';
import { scriptedCall, ScriptedModel } from '../../src/testing.js';
import { PackageError } from '../../src/core/errors.js';
import type { ChatMessage } from '../../src/index.js';
import { useTempDir } from '../support/temp.js';

const temp = useTempDir('steward-approval-');

/** The bundled tiny package, with `approval: <policy>` in echo's front matter (or a raw line). */
function tinyWith(name: string, line: string): string {
  const dir = temp.path(name);
  cpSync(join(bundledPackagesDir, 'tiny'), join(dir, 'tiny'), { recursive: true });
  const file = join(dir, 'tiny', 'workers', 'echo.md');
  writeFileSync(file, readFileSync(file, 'utf8').replace('outputTags: [note]\n', `outputTags: [note]\n${line}\n`));
  return dir;
}

/** The manager runs echo with `requiresApproval`; echo submits; the manager finishes. */
const script = (requiresApproval: boolean) =>
  new ScriptedModel([
    { agent: 'manager', toolCalls: [scriptedCall('run_worker', { workerId: 'echo', reason: 'Restate it.', requiresApproval }, 'call_rw')] },
    { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { note: 'A note.' } })] },
    { agent: 'manager', toolCalls: [scriptedCall('finish', { summary: 'Done.' })] },
  ]);

const toolResult = (messages: readonly ChatMessage[], id: string) => messages.find((m) => m.role === 'tool' && m.tool_call_id === id)?.content;

describe('approval policy', () => {
  it('a worker with approval: always waits in approve_step although the manager asked for none; the manager is told why', async () => {
    const runtime = createRuntime({ model: script(false), packagesDir: tinyWith('always', 'approval: always') });
    expect(runtime.packages.get('tiny')!.workers[0]!.approval).toBe('always');
    const session = await runtime.createSession({ packageId: 'tiny' });
    const result = await session.send({ type: 'user_submitted_input', text: 'Otters.' });
    expect(result.view).toMatchObject({
      state: 'waiting_user.approve_step',
      approvalRequiredBy: 'policy',
      pendingStep: { workerId: 'echo', requiresApproval: false, approval: 'always' },
    });
    const said = toolResult(await session.transcript('manager'), 'call_rw');
    expect(said).toMatch(/A person must approve this step.*approval policy for worker "echo" is "always".*although you asked for no approval/);
    expect((await session.send({ type: 'user_approved_next_step' })).view.state).toBe('waiting_user.review_artifact');
  });

  it('without a policy the manager decides, as before: no approval asked, none waited for', async () => {
    const session = await createRuntime({ model: script(false) }).createSession({ packageId: 'tiny' });
    const result = await session.send({ type: 'user_submitted_input', text: 'Otters.' });
    expect(result.view.state).toBe('waiting_user.review_artifact');
    expect(result.view.approvalRequiredBy).toBeUndefined();
    expect(toolResult(await session.transcript('manager'), 'call_rw')).toBe('The worker is running; you will hear when the user has reviewed its artifact.');
  });

  it('a manager that asks for approval: the view says the model required it', async () => {
    const session = await createRuntime({ model: script(true) }).createSession({ packageId: 'tiny' });
    const result = await session.send({ type: 'user_submitted_input', text: 'Otters.' });
    expect(result.view).toMatchObject({ state: 'waiting_user.approve_step', approvalRequiredBy: 'model', pendingStep: { approval: 'model' } });
  });

  it("the runtime's approval option overrides the front matter per step; its answers are journalled with the reply", async () => {
    const asked: unknown[] = [];
    const store = new MemoryStore();
    const runtime = createRuntime({
      model: script(true),
      store,
      packagesDir: tinyWith('override', 'approval: always'),
      approval: (step) => {
        asked.push(step);
        return 'never';
      },
    });
    const session = await runtime.createSession({ packageId: 'tiny' });
    const result = await session.send({ type: 'user_submitted_input', text: 'Otters.' });
    expect(asked).toEqual([{ workerId: 'echo', reason: 'Restate it.', requiresApproval: true, approval: 'always' }]);
    expect(result.view.state).toBe('waiting_user.review_artifact');
    expect(toolResult(await session.transcript('manager'), 'call_rw')).toMatch(
      /This step runs without a person's approval \(the approval policy for worker "echo" is "never"\), although you asked for one/,
    );
    const reply = (await store.journal(session.id)).find((e) => e.type === 'xstate.done.actor.managerTurn')!;
    expect((reply.payload as { output: { approvals?: unknown } }).output.approvals).toEqual([{ callId: 'call_rw', approval: 'never' }]);
  });

  it('an answer that is no policy fails the turn with a message naming the option', async () => {
    const runtime = createRuntime({ model: script(false), approval: () => 'sometimes' as never });
    const session = await runtime.createSession({ packageId: 'tiny' });
    const result = await session.send({ type: 'user_submitted_input', text: 'Otters.' });
    expect(result.view.notice).toMatch(/createRuntime\(\{ approval \}\) answered something else than "always", "never" or "model"/);
  });

  it('the loader refuses another value, naming the field and the values', () => {
    expect(() => loadPackages(tinyWith('bad', 'approval: sometimes'))).toThrow(PackageError);
    expect(() => loadPackages(tinyWith('bad2', 'approval: sometimes'))).toThrow(/"approval".*"always".*"never".*"model"/);
  });
});
