/**
 * A worker's MCP tool calls decided over the protocols of `steward serve`, against the
 * official-SDK notes server that records every call it receives: over AG-UI (HttpAgent) and
 * over A2A (@a2a-js/sdk's client), three calls that wait are decided one resume / one answer
 * each — approve with edited arguments, reject with a reason, approve — each interrupt naming
 * the next call that waits; only the approved calls reach the server, as approved, and an
 * AG-UI run sends each call's result (what it did, or the rejection), never a check's
 * "accepted" for a call that has not run.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/runtime/runtime.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { ScriptedModel, scriptedCall } from '../../src/models/scripted-model.js';
import { useTempDir } from '../support/temp.js';
import { ANA_TOKEN, serveForAna } from './protocol-server.js';
import { notesPackage, runKeeper, type NotesPackage } from '../tools/notes-package.js';
import { agUiAgent, runError, type RunRecord } from './ag-ui-client.js';
import { a2aClient, asTask, interruptOf, request, stateName } from './a2a-client.js';

const tmp = useTempDir('steward-protocol-tools-');
const open: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close();
});

function keeperModel() {
  return new ScriptedModel([
    { agent: 'manager', toolCalls: [runKeeper()] },
    {
      agent: 'worker',
      toolCalls: [
        scriptedCall('notes__write_note', { path: 'a.md', text: 'One' }, 'c1'),
        scriptedCall('notes__delete_note', { path: 'b.md' }, 'c2'),
        scriptedCall('notes__read_note', { path: 'a.md' }, 'c3'),
        scriptedCall('notes__write_note', { path: 'c.md', text: 'Three' }, 'c4'),
      ],
    },
    { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { note: 'Kept.' } })] },
  ]);
}

async function serve(name: string, notes: NotesPackage, model: ScriptedModel) {
  const store = new SqliteStore(tmp.path(`${name}.db`));
  const runtime = createRuntime({ model, store, packagesDir: notes.packagesDir, toolHost: { env: notes.env, log: () => {} } });
  const server = await serveForAna(runtime, store, open);
  return { server, store };
}

const EXPECTED_CALLS = [
  { tool: 'write_note', args: { path: 'a.md', text: 'Edited' } },
  { tool: 'read_note', args: { path: 'a.md' } },
  { tool: 'write_note', args: { path: 'c.md', text: 'Three' } },
];

const results = (record: RunRecord) => record.events.filter((e) => e.type === 'TOOL_CALL_RESULT').map((e) => [e.toolCallId, e.content]);

describe('MCP tool calls over the protocols', { timeout: 120_000 }, () => {
  it('AG-UI: one resume per call, each interrupt naming the next call that waits; results are what the calls did', async () => {
    const notes = notesPackage();
    const model = keeperModel();
    const { server } = await serve('ag-ui', notes, model);
    const tab = agUiAgent(`${server.url}/ag-ui/notes`, 'thread-notes', ANA_TOKEN);
    tab.agent.addMessage({ id: 'u1', role: 'user', content: 'Keep my notes.' });
    const first = await tab.run();
    expect(runError(first)).toBeUndefined();
    // No call has a result before it ran: not the ones that wait, nor the read queued behind them.
    expect(results(first).filter(([id]) => /^c\d$/.test(String(id)))).toEqual([]);
    const i1 = tab.interrupt!;
    expect(i1).toMatchObject({ id: 'thread-notes#w2~c1', reason: 'tool_call', toolCallId: 'c1', message: 'Allow notes.write_note (1 of 3 calls waiting)?' });
    expect(tab.state.toolCalls.map((c: { callId: string; status: string }) => [c.callId, c.status])).toEqual([
      ['c1', 'pending'],
      ['c2', 'pending'],
      ['c3', 'approved'],
      ['c4', 'pending'],
    ]);

    const edited = await tab.resume(i1, { approved: true, arguments: { path: 'a.md', text: 'Edited' } });
    expect(runError(edited)).toBeUndefined();
    expect(tab.interrupt).toMatchObject({ reason: 'tool_call', toolCallId: 'c2', message: 'Allow notes.delete_note (1 of 2 calls waiting)?' });
    expect(results(edited).filter(([id]) => /^c\d$/.test(String(id)))).toEqual([]);

    // The first resume sent again (a reloaded tab): c1's interrupt is no longer open; nothing is applied to c2.
    const replay = await agUiAgent(`${server.url}/ag-ui/notes`, 'thread-notes', ANA_TOKEN).resume(i1, {
      approved: true,
      arguments: { path: 'a.md', text: 'Edited' },
    });
    expect(runError(replay)).toMatchObject({ code: 'interrupt_stale' });
    const reloaded = agUiAgent(`${server.url}/ag-ui/notes`, 'thread-notes', ANA_TOKEN);
    expect(runError(await reloaded.run())).toBeUndefined();
    expect(reloaded.state.toolCalls.map((c: { status: string }) => c.status)).toEqual(['approved', 'pending', 'approved', 'pending']);
    const rejected = await tab.resume(tab.interrupt!, { approved: false, reason: 'Keep b.' });
    expect(runError(rejected)).toBeUndefined();
    expect(tab.interrupt).toMatchObject({ reason: 'tool_call', toolCallId: 'c4' });
    expect(notes.calls()).toEqual([]);

    const last = await tab.resume(tab.interrupt!, { approved: true });
    expect(runError(last)).toBeUndefined();
    expect(tab.interrupt).toMatchObject({ reason: 'steward:artifact_review' });
    expect(notes.calls()).toEqual(EXPECTED_CALLS);
    // Each call's one result, as the model got it, sent by the run it came in.
    const all = [...results(first), ...results(edited), ...results(rejected), ...results(last)].filter(([id]) => /^c\d$/.test(String(id)));
    expect(Object.fromEntries(all)).toEqual({
      c1: 'wrote a.md',
      c2: 'Error: a person rejected this call; it did not run. Their reason: Keep b.',
      c3: 'Edited',
      c4: 'wrote c.md',
    });
    expect(all).toHaveLength(4);
    model.assertComplete();
  });

  it('A2A: one answer per call, each status naming the next call that waits', async () => {
    const notes = notesPackage();
    const model = keeperModel();
    const { server } = await serve('a2a', notes, model);
    const client = await a2aClient(server.url, 'notes', ANA_TOKEN);
    let task = asTask(await client.sendMessage(request({ text: 'Keep my notes.' })));
    const answer = async (data: unknown) => {
      const interrupt = interruptOf(task)!;
      task = asTask(await client.sendMessage(request({ data }, { taskId: task.id }, { steward: { interruptId: interrupt.id } })));
      return interrupt;
    };
    expect(stateName(task.status?.state)).toBe('input-required');
    expect(interruptOf(task)).toMatchObject({ reason: 'tool_call', toolCallId: 'c1' });
    const first = await answer({ approved: true, arguments: { path: 'a.md', text: 'Edited' } });
    expect(interruptOf(task)).toMatchObject({ reason: 'tool_call', toolCallId: 'c2' });
    // The first answer sent again (a retry, another tab): it names c1's interrupt, so it is for c1, which is decided — never for c2.
    const resent = await client
      .sendMessage(
        request({ data: { approved: true, arguments: { path: 'a.md', text: 'Edited' } } }, { taskId: task.id }, { steward: { interruptId: first.id } }),
      )
      .then(asTask, (error: unknown) => error);
    expect(JSON.stringify(resent)).toContain('"code":"event_refused"');
    await answer({ approved: false, reason: 'Keep b.' });
    expect(interruptOf(task)).toMatchObject({ reason: 'tool_call', toolCallId: 'c4' });
    expect(notes.calls()).toEqual([]);
    await answer({ callId: 'c4', approved: true });
    expect(interruptOf(task)).toMatchObject({ reason: 'steward:artifact_review' });
    expect(notes.calls()).toEqual(EXPECTED_CALLS);
    model.assertComplete();
  });
});
