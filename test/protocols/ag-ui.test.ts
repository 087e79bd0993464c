/**
 * The AG-UI 1.0 endpoint of `steward serve`, driven by `@ag-ui/client`'s own HttpAgent (its
 * event verification on: a malformed stream fails the run): a short-story thread from the
 * first request to done through every kind of interrupt — approve with edits, reject and a
 * revision, the worker's questions, accept with edits — on SQLite with a named token, and
 * what the interrupt contract refuses (a bad payload, a stale interrupt, new input while one
 * is open) changes nothing, while the same resume sent twice is harmless.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { EventSchema } from '@ag-ui/core/schemas';
import type { ModelReply, ModelRequest } from '../../src/core/models/model.js';
import { ScriptedModel, scriptedCall } from '../../src/models/scripted-model.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import { startServe, type ServeHandle } from '../../src/serve/server.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import type { SessionStore } from '../../src/store/session-store.js';
import { useTempDir } from '../support/temp.js';
import { agUiAgent, runError, types, type RunRecord } from './ag-ui-client.js';

const tmp = useTempDir('steward-ag-ui-');
const open: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close();
});

const TOKEN = 'token-of-ana-0123456789';

/** A manager reply that streams its text as a model with a listener does, and calls tools. */
const streamed =
  (text: string, calls: Array<{ name: string; args: unknown; id: string }>) =>
  (request: ModelRequest): ModelReply => {
    expect(request.agent).toBe('manager');
    for (const piece of text.match(/.{1,6}/g) ?? []) request.onTextDelta?.(piece);
    return { content: text, toolCalls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.args) } })) };
  };

function storyModel() {
  return new ScriptedModel([
    /* 0 */ streamed('Let me plan the brief.', [
      { name: 'no_such_tool', args: {}, id: 'call_bogus' },
      { name: 'run_worker', args: { workerId: 'brief-writer', reason: 'Write the brief.', requiresApproval: true }, id: 'call_brief' },
    ]),
    /* 1 */ { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { brief: 'A keeper, a storm, a light.' } })] },
    /* 2 */ { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { brief: 'A keeper, a storm, a light that answers.' } })] },
    /* 3 */ {
      agent: 'manager',
      toolCalls: [scriptedCall('run_worker', { workerId: 'outliner', reason: 'Plan three scenes.', requiresApproval: true }, 'call_outline')],
    },
    /* 4 */ { agent: 'worker', toolCalls: [scriptedCall('ask_user', { questions: ['Does the keeper survive?'] })] },
    /* 5 */ { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { outline: '1. Storm. 2. Light. 3. Dawn.' } })] },
    /* 6 */ { agent: 'manager', toolCalls: [scriptedCall('finish', { summary: 'Brief and outline are accepted.' })] },
  ]);
}

async function serve(store: SessionStore, model: ScriptedModel): Promise<ServeHandle> {
  const runtime = createRuntime({ model, store });
  const logs: string[] = [];
  const server = await startServe({ runtime, store, port: 0, tokens: [{ name: 'ana', token: TOKEN, actForOthers: false }], log: (m) => logs.push(m) });
  open.push(async () => {
    await server.close();
    expect(logs.filter((l) => l.includes('AG-UI'))).toEqual([]);
  });
  return server;
}

/** A run that went through: the client verified it, the snapshots came before RUN_FINISHED. */
function finished(record: RunRecord, outcome: 'interrupt' | 'success') {
  expect(record.error, String(record.error)).toBeUndefined();
  expect(runError(record)).toBeUndefined();
  const t = types(record);
  expect(t[0]).toBe('RUN_STARTED');
  expect(t.slice(-3)).toEqual(['STATE_SNAPSHOT', 'MESSAGES_SNAPSHOT', 'RUN_FINISHED']);
  expect(record.events.at(-1)?.outcome?.type).toBe(outcome);
  for (const event of record.events) expect(EventSchema.safeParse(event).success).toBe(true);
}

describe('AG-UI endpoint with HttpAgent', () => {
  it('drives short-story from the first request to done through every kind of interrupt; refusals change nothing', async () => {
    const store = new SqliteStore(tmp.path('story.db'));
    open.push(async () => store.close());
    const model = storyModel();
    const server = await serve(store, model);
    const url = `${server.url}/ag-ui/short-story`;
    const journalLength = async () => (await store.journal('thread-story')).length;

    const caps = await fetch(`${url}/capabilities`, { headers: { authorization: `Bearer ${TOKEN}` } }).then((r) => r.json());
    expect(caps.humanInTheLoop).toMatchObject({ approvals: true, interrupts: true, approveWithEdits: true });

    // ── The first request: a new thread creates the session; the manager streams text, one call is refused ──
    const tab = agUiAgent(url, 'thread-story', TOKEN);
    tab.agent.addMessage({ id: 'u1', role: 'user', content: 'A story about a lighthouse keeper.' });
    const first = await tab.run();
    finished(first, 'interrupt');
    const text = first.events.filter((e) => e.type === 'TEXT_MESSAGE_CONTENT').map((e) => e.delta as string);
    expect(text.join('')).toBe('Let me plan the brief.');
    const refused = first.events.find((e) => e.type === 'TOOL_CALL_RESULT' && e.toolCallId === 'call_bogus')!;
    expect(JSON.parse(refused.content)).toMatchObject({ accepted: false, rule: expect.any(String), message: expect.stringContaining('no_such_tool') });
    // The approval's own call gets its result in the run that answers it, not before.
    expect(first.events.some((e) => e.type === 'TOOL_CALL_RESULT' && e.toolCallId === 'call_brief')).toBe(false);
    const approval = tab.interrupt!;
    expect(approval).toMatchObject({ reason: 'tool_call', toolCallId: 'call_brief', responseSchema: { required: ['approved'] } });
    expect(tab.agent.messages.flatMap((m) => ('toolCalls' in m ? (m.toolCalls ?? []) : [])).map((c) => c.id)).toContain('call_brief');
    expect(tab.state).toMatchObject({ waitingReason: 'approve_step', pendingStep: { workerId: 'brief-writer' } });

    // ── Refused, nothing changed: new input in another tab, a bad payload, a payload that names `by` ──
    const before = await journalLength();
    const otherTab = agUiAgent(url, 'thread-story', TOKEN);
    otherTab.agent.addMessage({ id: 'u2', role: 'user', content: 'Something else.' });
    expect(runError(await otherTab.run())).toMatchObject({ code: 'interrupt_pending', message: expect.stringContaining(approval.id) });
    expect(runError(await tab.resume(approval, { approved: 'yes' }))).toMatchObject({ code: 'invalid_resume_payload' });
    expect(runError(await tab.resume(approval, { approved: true, by: 'mallory' }))).toMatchObject({ code: 'invalid_resume_payload' });
    expect(await journalLength()).toBe(before);
    expect(tab.interrupt?.id).toBe(approval.id);
    // Cancelled: nothing is sent, the run reports the same interrupt.
    const cancelled = await tab.run({ resume: [{ interruptId: approval.id, status: 'cancelled' }] });
    finished(cancelled, 'interrupt');
    expect(tab.interrupt?.id).toBe(approval.id);
    // Refused by the chart's guard (a role the worker does not have): journalled as a refusal, the wait and its id stay.
    const refusedByGuard = await tab.resume(approval, { approved: true, roleId: 'no-such-role' });
    expect(runError(refusedByGuard)).toMatchObject({ code: 'event_refused' });
    expect(types(refusedByGuard)).not.toContain('TOOL_CALL_RESULT');
    const reloaded = agUiAgent(url, 'thread-story', TOKEN);
    finished(await reloaded.run(), 'interrupt');
    expect(reloaded.interrupt).toEqual(approval);

    // ── Approve with edits: the step runs with the user's task; `by` is the token's name ──
    const approved = await tab.resume(approval, { approved: true, reason: 'Write the brief in the second person.' });
    finished(approved, 'interrupt');
    const answered = approved.events.find((e) => e.type === 'TOOL_CALL_RESULT' && e.toolCallId === 'call_brief')!;
    expect(JSON.parse(answered.content)).toMatchObject({ decision: 'user_approved_next_step' });
    expect(model.calls[1]!.messages.map((m) => m.content).join('\n')).toContain('Write the brief in the second person.');
    const journal = await store.journal('thread-story');
    expect(journal.findLast((e) => e.type === 'user_approved_next_step')?.payload).toMatchObject({
      by: 'ana',
      through: 'ag-ui',
      edits: { reason: 'Write the brief in the second person.' },
    });
    const review = tab.interrupt!;
    expect(review).toMatchObject({ reason: 'steward:artifact_review', responseSchema: { required: ['accepted'] } });
    expect(tab.state.artifact).toMatchObject({ id: 'a1', workerId: 'brief-writer' });

    // ── The same resume again (a reloaded tab re-sends it): answered from the journal; a different one is stale ──
    const afterApproval = await journalLength();
    const replayTab = agUiAgent(url, 'thread-story', TOKEN);
    const replay = await replayTab.resume(approval, { approved: true, reason: 'Write the brief in the second person.' });
    finished(replay, 'interrupt');
    expect(replayTab.interrupt?.id).toBe(review.id);
    const stale = await agUiAgent(url, 'thread-story', TOKEN).resume(approval, { approved: false });
    expect(runError(stale)).toMatchObject({ code: 'interrupt_stale', message: expect.stringContaining(review.id) });
    expect(await journalLength()).toBe(afterApproval);

    // ── Reject, then the revision's notes (input_required with a text schema) ──
    finished(await tab.resume(review, { accepted: false, reason: 'Too plain.' }), 'interrupt');
    const notes = tab.interrupt!;
    expect(notes).toMatchObject({ reason: 'input_required', metadata: { steward: { waitingReason: 'revision' } }, responseSchema: { required: ['text'] } });
    finished(await tab.resume(notes, { text: 'Let the light answer him.' }), 'interrupt');
    expect(tab.state.artifact).toMatchObject({ id: 'a2', revises: 'a1' });

    // ── Accept with edits: the edited body goes on the blackboard, written by the caller ──
    finished(await tab.resume(tab.interrupt!, { accepted: true, edits: { brief: 'You keep the light. It answers.' } }), 'interrupt');
    expect(tab.state.blackboard).toContainEqual({ tag: 'brief', version: 3, writtenBy: 'ana' });

    // ── The next approval, then the worker's question card ──
    expect(tab.interrupt).toMatchObject({ reason: 'tool_call', toolCallId: 'call_outline' });
    finished(await tab.resume(tab.interrupt!, { approved: true }), 'interrupt');
    const questions = tab.interrupt!;
    expect(questions).toMatchObject({ reason: 'input_required', metadata: { steward: { waitingReason: 'worker_questions' } } });
    expect(JSON.stringify(questions.responseSchema)).toContain('Does the keeper survive?');
    finished(await tab.resume(questions, { answers: { q1: 'He does.' } }), 'interrupt');
    finished(await tab.resume(tab.interrupt!, { accepted: true }), 'success');

    expect(tab.state).toMatchObject({ phase: 'done' });
    expect(tab.agent.pendingInterrupts).toEqual([]);
    model.assertComplete();

    // The chat a client shows (MESSAGES_SNAPSHOT): the person's request, the manager's words and
    // the approvals' calls; none of the chart's notes to the manager about the person's decisions.
    const chat = tab.agent.messages;
    expect(chat.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['A story about a lighthouse keeper.']);
    expect(chat.filter((m) => m.role === 'assistant').map((m) => m.content)).toEqual(['Let me plan the brief.', undefined, 'Brief and outline are accepted.']);
    expect(chat.flatMap((m) => ('toolCalls' in m ? (m.toolCalls ?? []) : [])).map((c) => c.id)).toEqual(['call_brief', 'call_outline']);
    expect(JSON.stringify(chat)).not.toMatch(/The user \(ana\) approved|The user accepted|Plan the next step|no_such_tool/);

    // A done thread takes no new request.
    tab.agent.addMessage({ id: 'u3', role: 'user', content: 'Another one.' });
    expect(runError(await tab.run())).toMatchObject({ code: 'thread_done' });
  });
});
