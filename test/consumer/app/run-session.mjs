// (a) An installed app: the Node runtime with a scripted model, run to the first wait.
import { createRuntime, MemoryStore } from 'steward';
import { ScriptedModel, scriptedCall } from 'steward/testing';

const model = new ScriptedModel([
  { agent: 'manager', toolCalls: [scriptedCall('run_worker', { workerId: 'echo', reason: 'Restate the request.', requiresApproval: true })] },
]);
const runtime = createRuntime({ model, store: new MemoryStore() });
const session = await runtime.createSession({ packageId: 'tiny' });
await session.send({ type: 'user_submitted_input', text: 'A note about otters.' });
const { view } = await session.send({ type: 'user_confirmed_intake' });
model.assertComplete();
console.log(
  JSON.stringify({ state: view.state, waitingReason: view.waitingReason, pendingStep: view.pendingStep?.workerId, enabled: session.enabledEvents() }),
);
