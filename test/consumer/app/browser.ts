// (b) A DOM-only project (lib ES2022 + DOM, `types: []`): steward/machine and steward/testing
// must compile with no Node types.
import { sessionMachine, sessionView, type SessionView } from 'steward/machine';
import { ScriptedModel, scriptedCall } from 'steward/testing';
import { createActor } from 'xstate';

const model = new ScriptedModel([{ agent: 'manager', toolCalls: [scriptedCall('finish', { summary: 'Done.' })] }]);
const actor = createActor(sessionMachine, { input: { sessionId: 'b1', catalog: [] } }).start();
const view: SessionView = sessionView(actor.getSnapshot());
document.body.textContent = `${view.state} ${model.remaining}`;
