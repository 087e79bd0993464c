/**
 * AG-UI's TOOL_CALL_ARGS as the model writes them: with a model that streams its tool calls
 * (ScriptedModel with pieces of 7 characters), each call is opened when its first piece
 * names it, gets one TOOL_CALL_ARGS per piece, is closed when the round ends and gets its
 * result once checked — verified by `@ag-ui/client`'s own event checks; the pieces join to
 * the arguments the call was checked with.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ScriptedModel, scriptedCall } from '../../src/models/scripted-model.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import { startServe } from '../../src/serve/server.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { agUiAgent, runError, type WireEvent } from './ag-ui-client.js';

const open: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close();
});

const ARGS = { workerId: 'echo', reason: 'Restate the request.', requiresApproval: true };

describe('AG-UI tool calls, streamed', () => {
  it('sends TOOL_CALL_ARGS piece by piece as the model writes the call', async () => {
    const store = new MemoryStore();
    const model = new ScriptedModel([{ agent: 'manager', toolCalls: [scriptedCall('run_worker', ARGS, 'call_echo')] }], { streamPieceChars: 7 });
    const server = await startServe({ runtime: createRuntime({ model, store }), store, port: 0, log: () => {} });
    open.push(() => server.close());
    const tab = agUiAgent(`${server.url}/ag-ui/tiny`, 'thread-args');
    tab.agent.addMessage({ id: 'u1', role: 'user', content: 'A note.' });
    const record = await tab.run();
    expect(record.error, String(record.error)).toBeUndefined();
    expect(runError(record)).toBeUndefined();

    const ofCall = record.events.filter((e: WireEvent) => e.toolCallId === 'call_echo' && e.type.startsWith('TOOL_CALL_'));
    const kinds = ofCall.map((e) => e.type);
    const args = ofCall.filter((e) => e.type === 'TOOL_CALL_ARGS');
    const text = JSON.stringify(ARGS);
    expect(args.length).toBe(Math.ceil(text.length / 7));
    expect(args.map((e) => e.delta).join('')).toBe(text);
    expect(kinds).toEqual(['TOOL_CALL_START', ...args.map(() => 'TOOL_CALL_ARGS'), 'TOOL_CALL_END']);
    // Opened during the round (before STEP_FINISHED), closed at its end; the approval's result comes with the answer.
    const types: string[] = record.events.map((e) => e.type);
    expect(types.indexOf('TOOL_CALL_START')).toBeLessThan(types.indexOf('STEP_FINISHED'));
    expect(types.indexOf('TOOL_CALL_END')).toBeLessThan(types.indexOf('STEP_FINISHED'));
    expect(tab.interrupt).toMatchObject({ reason: 'tool_call', toolCallId: 'call_echo' });
    expect(tab.agent.messages.flatMap((m) => ('toolCalls' in m ? (m.toolCalls ?? []) : [])).find((c) => c.id === 'call_echo')?.function.arguments).toBe(text);
  });
});
