/**
 * Secrets in any model's error are masked where the machine turns it into a notice (and a
 * message to the manager) and where the journal stores the actor error: not only for
 * OpenAIModel, which masks its own messages.
 */
import { expect, it } from 'vitest';
import { createRuntime, MemoryStore } from '../../src/index.js';
import { scriptedCall, ScriptedModel } from '../../src/testing.js';

const leak = 'Incorrect API key provided: sk-live-abcdefghijklmnop1234 (via http://alice:hunter2@proxy.local/v1)';

it('masks keys and URL credentials of a failing model in the notice, the manager transcript and the journal', async () => {
  const store = new MemoryStore();
  const model = new ScriptedModel([
    { agent: 'manager', toolCalls: [scriptedCall('run_worker', { workerId: 'echo', reason: 'go', requiresApproval: false })] },
    { agent: 'worker', error: new Error(leak) },
  ]);
  const session = await createRuntime({ model, store }).createSession({ packageId: 'tiny' });
  const result = await session.send({ type: 'user_submitted_input', text: 'A note' });
  expect(result.view.notice).toContain('Incorrect API key provided: sk-… (via http://***@proxy.local/v1)');
  const everything = JSON.stringify([result.view, session.persisted(), await store.journal(session.id)]);
  expect(everything).toContain('sk-…');
  expect(everything).not.toContain('abcdefghijklmnop');
  expect(everything).not.toContain('hunter2');
});
