/**
 * The two waits of a worker's MCP tool call over the protocols of `steward serve`, with real
 * clients (@ag-ui/client's HttpAgent, @a2a-js/sdk's client) and the official-SDK notes server
 * that records every call it receives:
 * - tool_input: confirm_write's server asks a person for a form (a 2026-07-28 input_required):
 *   the interrupt names the call and carries the server's own schema; an answer that breaks it
 *   is refused and never reaches the server; a good one completes the call, and the model reads
 *   what the server answered; the same answer sent again is harmless.
 * - tool_interrupted: a call cut off by a stopped process (here the `toolCall` actor says so,
 *   as the runtime's does for a call a dead process left under way): a person gives its result
 *   or skips it, and the model reads that.
 */
import type { Message } from '@ag-ui/client';
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/runtime/runtime.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import type { ScriptedModel } from '../../src/models/scripted-model.js';
import { useTempDir } from '../support/temp.js';
import { ANA_TOKEN, serveForAna } from './protocol-server.js';
import { notesPackage, type NotesPackage } from '../tools/notes-package.js';
import { BAD_INITIALS, callsModel, CONFIRM_FORM, CONFIRMED, confirmWrite, cutOffCalls, GIVEN, READ_GIVEN, writeNote } from '../tools/tool-wait-sessions.js';
import { agUiAgent, runError, type RunRecord } from './ag-ui-client.js';
import { a2aClient, asTask, interruptOf, request, stateName } from './a2a-client.js';

const tmp = useTempDir('steward-protocol-tool-waits-');
const open: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close();
});

async function serve(name: string, notes: NotesPackage, model: ScriptedModel, machine?: typeof cutOffCalls) {
  const store = new SqliteStore(tmp.path(`${name}.db`));
  const runtime = createRuntime({ model, store, packagesDir: notes.packagesDir, toolHost: { env: notes.env, log: () => {} }, ...(machine ? { machine } : {}) });
  const server = await serveForAna(runtime, store, open);
  return { server, store };
}

/** What an A2A error says: its message and its metadata (the code). */
const said = (error: unknown) => (error instanceof Error ? `${error.message} ${JSON.stringify(error)}` : JSON.stringify(error));

/** A tool call as the chat (MESSAGES_SNAPSHOT) shows it: its name, its arguments, its result message's content. */
function chatCall(messages: readonly Message[], id: string) {
  const call = messages.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []) : [])).find((c) => c.id === id);
  const result = messages.find((m) => m.role === 'tool' && m.toolCallId === id);
  return call && { name: call.function.name, arguments: JSON.parse(call.function.arguments) as unknown, result: result?.content };
}

const results = (record: RunRecord) => record.events.filter((e) => e.type === 'TOOL_CALL_RESULT').map((e) => [e.toolCallId, e.content]);

const GOOD = { responses: CONFIRMED };
const BAD = { responses: BAD_INITIALS };

describe('tool_input over the protocols', { timeout: 120_000 }, () => {
  it('AG-UI: the interrupt names the call and holds the server’s form; a bad answer is refused, a good one completes the call', async () => {
    const notes = notesPackage();
    const { model, read } = callsModel(confirmWrite());
    const { server } = await serve('ag-ui-input', notes, model);
    const tab = agUiAgent(`${server.url}/ag-ui/notes`, 'thread-input', ANA_TOKEN);
    tab.agent.addMessage({ id: 'u1', role: 'user', content: 'Write a.md.' });
    expect(runError(await tab.run())).toBeUndefined();
    expect(tab.interrupt).toMatchObject({ reason: 'tool_call', toolCallId: 'c1' });
    const approved = await tab.resume(tab.interrupt!, { approved: true });
    expect(runError(approved)).toBeUndefined();
    const asking = tab.interrupt!;
    expect(asking).toMatchObject({ id: 'thread-input#w3~c1', reason: 'input_required', toolCallId: 'c1', message: 'notes.confirm_write asks: Write a.md?' });
    expect((asking.responseSchema as any).properties.responses.properties.confirm.properties.content).toEqual(CONFIRM_FORM);
    expect(notes.calls()).toEqual([{ tool: 'confirm_write?', args: { path: 'a.md', text: 'One' } }]);
    // Nothing has a result yet: the call waits for the person. The call the interrupt names is in the chat, with its arguments.
    expect(results(approved).filter(([id]) => id === 'c1')).toEqual([]);
    expect(chatCall(tab.agent.messages, 'c1')).toEqual({ name: 'notes__confirm_write', arguments: { path: 'a.md', text: 'One' }, result: undefined });

    const bad = await tab.resume(asking, BAD);
    expect(runError(bad)).toMatchObject({ code: 'invalid_event' });
    expect(runError(bad)?.message).toMatch(/does not match the form notes\.confirm_write asked for: content\/initials must NOT have fewer than 2 characters/);
    expect(notes.calls()).toHaveLength(1);

    const good = await tab.resume(asking, GOOD);
    expect(runError(good)).toBeUndefined();
    expect(tab.interrupt).toMatchObject({ reason: 'steward:artifact_review' });
    expect(results(good).filter(([id]) => id === 'c1')).toEqual([['c1', 'wrote a.md, confirmed by AB']]);
    expect(notes.calls()).toEqual([
      { tool: 'confirm_write?', args: { path: 'a.md', text: 'One' } },
      { tool: 'confirm_write', args: { path: 'a.md', text: 'One', answer: { action: 'accept', content: { confirm: true, initials: 'AB' } } } },
    ]);
    expect(read).toEqual(['wrote a.md, confirmed by AB']);
    expect(chatCall(tab.agent.messages, 'c1')?.result).toBe('wrote a.md, confirmed by AB');

    // The same answer sent again (a reloaded tab): harmless, nothing reaches the server again.
    const again = await agUiAgent(`${server.url}/ag-ui/notes`, 'thread-input', ANA_TOKEN).resume(asking, GOOD);
    expect(runError(again)).toBeUndefined();
    expect(notes.calls()).toHaveLength(2);
    model.assertComplete();
  });

  it('A2A: the input-required status carries the same interrupt; the answer names it; a bad answer is refused, a good one goes on', async () => {
    const notes = notesPackage();
    const { model, read } = callsModel(confirmWrite());
    const { server } = await serve('a2a-input', notes, model);
    const client = await a2aClient(server.url, 'notes', ANA_TOKEN);
    let task = asTask(await client.sendMessage(request({ text: 'Write a.md.' })));
    const answer = (data: unknown, interruptId: string) =>
      client.sendMessage(request({ data }, { taskId: task.id }, { steward: { interruptId } })).then(asTask, (error: unknown) => error);
    expect(interruptOf(task)).toMatchObject({ reason: 'tool_call', toolCallId: 'c1' });
    task = asTask(await answer({ approved: true }, interruptOf(task)!.id));
    expect(stateName(task.status?.state)).toBe('input-required');
    const asking = interruptOf(task)!;
    expect(asking).toMatchObject({ id: `${task.id}#w3~c1`, reason: 'input_required', toolCallId: 'c1', message: 'notes.confirm_write asks: Write a.md?' });
    expect((asking.responseSchema as any).properties.responses.properties.confirm.properties.content).toEqual(CONFIRM_FORM);
    expect(task.status?.message?.metadata).toMatchObject({ steward: { interruptId: asking.id, waitingReason: 'tool_input' } });

    const bad = await answer(BAD, asking.id);
    expect(said(bad)).toMatch(/content\/initials must NOT have fewer than 2 characters.*"code":"invalid_event"/);
    expect(notes.calls()).toHaveLength(1);

    task = asTask(await answer(GOOD, asking.id));
    expect(interruptOf(task)).toMatchObject({ reason: 'steward:artifact_review' });
    expect(notes.calls()).toEqual([
      { tool: 'confirm_write?', args: { path: 'a.md', text: 'One' } },
      { tool: 'confirm_write', args: { path: 'a.md', text: 'One', answer: { action: 'accept', content: { confirm: true, initials: 'AB' } } } },
    ]);
    expect(read).toEqual(['wrote a.md, confirmed by AB']);

    // The same answer sent again (a retry with a new message id): the task as it is, nothing sent again.
    const again = await answer(GOOD, asking.id);
    expect(interruptOf(asTask(again))).toMatchObject({ reason: 'steward:artifact_review' });
    // Another answer for the closed wait is refused.
    const other = await answer({ responses: { confirm: { action: 'decline' } } }, asking.id);
    expect(said(other)).toMatch(/answered differently.*"code":"wait_closed"/);
    expect(notes.calls()).toHaveLength(2);
    model.assertComplete();
  });
});

const READ_SKIPPED =
  'Error: this call was cut off when the process running it stopped, so it may or may not have taken effect; a person chose not to run it again. ' +
  'Check what it did before you call it again. Their reason: Check it by hand.';

describe('tool_interrupted over the protocols', { timeout: 120_000 }, () => {
  it('AG-UI: the interrupt names the cut-off call; a result given by hand is what the model reads (the same resume again is harmless); a skip tells the model', async () => {
    const notes = notesPackage();
    const { model, read } = callsModel(writeNote(), writeNote());
    const { server } = await serve('ag-ui-interrupted', notes, model, cutOffCalls);
    const cutOffCall = async (thread: string) => {
      const tab = agUiAgent(`${server.url}/ag-ui/notes`, thread, ANA_TOKEN);
      tab.agent.addMessage({ id: 'u1', role: 'user', content: 'Write a.md.' });
      expect(runError(await tab.run())).toBeUndefined();
      expect(runError(await tab.resume(tab.interrupt!, { approved: true }))).toBeUndefined();
      const interrupt = tab.interrupt!;
      expect(interrupt).toMatchObject({
        id: `${thread}#w3~c1`,
        reason: 'tool_call',
        toolCallId: 'c1',
        metadata: { steward: { waitingReason: 'tool_interrupted' } },
      });
      expect(interrupt.message).toMatch(/^notes\.write_note was cut off when the process running it stopped/);
      return { tab, interrupt };
    };

    const given = await cutOffCall('thread-given');
    const answered = await given.tab.resume(given.interrupt, { result: GIVEN });
    expect(runError(answered)).toBeUndefined();
    expect(given.tab.interrupt).toMatchObject({ reason: 'steward:artifact_review' });
    expect(results(answered).filter(([id]) => id === 'c1')).toEqual([['c1', READ_GIVEN]]);
    const again = await agUiAgent(`${server.url}/ag-ui/notes`, 'thread-given', ANA_TOKEN).resume(given.interrupt, { result: GIVEN });
    expect(runError(again)).toBeUndefined();
    const otherwise = await agUiAgent(`${server.url}/ag-ui/notes`, 'thread-given', ANA_TOKEN).resume(given.interrupt, { approved: true });
    expect(runError(otherwise)).toMatchObject({ code: 'interrupt_stale' });

    const skipped = await cutOffCall('thread-skipped');
    // Either run again / skip, or a result: never both.
    const both = await skipped.tab.resume(skipped.interrupt, { approved: false, result: GIVEN });
    expect(runError(both)).toMatchObject({ code: 'invalid_resume_payload' });
    const skip = await skipped.tab.resume(skipped.interrupt, { approved: false, reason: 'Check it by hand.' });
    expect(runError(skip)).toBeUndefined();
    expect(skipped.tab.interrupt).toMatchObject({ reason: 'steward:artifact_review' });
    expect(read).toEqual([READ_GIVEN, READ_SKIPPED]);
    // Nothing ran again without a person, and neither decision ran it.
    expect(notes.calls()).toEqual([]);
    model.assertComplete();
  });

  it('A2A: the input-required status names the cut-off call; a result given by hand, or a skip, is what the model reads', async () => {
    const notes = notesPackage();
    const { model, read } = callsModel(writeNote(), writeNote());
    const { server } = await serve('a2a-interrupted', notes, model, cutOffCalls);
    const client = await a2aClient(server.url, 'notes', ANA_TOKEN);
    const answer = (taskId: string, data: unknown, interruptId: string) =>
      client.sendMessage(request({ data }, { taskId }, { steward: { interruptId } })).then(asTask, (error: unknown) => error);
    const cutOffCall = async () => {
      const started = asTask(await client.sendMessage(request({ text: 'Write a.md.' })));
      const task = asTask(await answer(started.id, { approved: true }, interruptOf(started)!.id));
      expect(stateName(task.status?.state)).toBe('input-required');
      const interrupt = interruptOf(task)!;
      expect(interrupt).toMatchObject({ id: `${task.id}#w3~c1`, reason: 'tool_call', toolCallId: 'c1' });
      expect(task.status?.message?.metadata).toMatchObject({ steward: { interruptId: interrupt.id, waitingReason: 'tool_interrupted' } });
      return { id: task.id, interrupt };
    };

    const given = await cutOffCall();
    expect(interruptOf(asTask(await answer(given.id, { result: GIVEN }, given.interrupt.id)))).toMatchObject({ reason: 'steward:artifact_review' });
    // The same answer again: the task as it is.
    expect(interruptOf(asTask(await answer(given.id, { result: GIVEN }, given.interrupt.id)))).toMatchObject({ reason: 'steward:artifact_review' });

    const skipped = await cutOffCall();
    const skip = asTask(await answer(skipped.id, { approved: false, reason: 'Check it by hand.' }, skipped.interrupt.id));
    expect(interruptOf(skip)).toMatchObject({ reason: 'steward:artifact_review' });
    expect(read).toEqual([READ_GIVEN, READ_SKIPPED]);
    expect(notes.calls()).toEqual([]);
    model.assertComplete();
  });
});
