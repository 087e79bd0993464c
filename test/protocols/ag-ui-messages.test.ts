/**
 * AG-UI's MESSAGES_SNAPSHOT as a chat: what the person said (role user) and what the agents
 * said to them (role assistant), never the chart's notes to the manager about the person's
 * decisions, its nudges, or the manager's loop calls. Every kind of note is made by a real
 * session (the chart writes them), so the test follows their wording.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { messagesOf } from '../../src/protocols/ag-ui/events.js';
import { storedSnapshot } from '../../src/runtime/persisted.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import { ScriptedModel, scriptedCall } from '../../src/models/scripted-model.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import type { Runtime } from '../../src/runtime/runtime.js';
import { notesPackage } from '../tools/notes-package.js';

const runWorker = (id: string) => scriptedCall('run_worker', { workerId: 'echo', reason: 'Restate the request.', requiresApproval: true }, id);

const runtimes: Runtime[] = [];
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((r) => r.close()));
});

describe('messagesOf', () => {
  it('keeps the person’s texts and what the agents told them; drops every note, nudge, refusal and loop call', async () => {
    const model = new ScriptedModel([
      { agent: 'manager', content: 'Let me read it.', toolCalls: [scriptedCall('read_blackboard', { tags: ['request'] }, 'call_read')] },
      { agent: 'manager', content: null, toolCalls: [] },
      { agent: 'manager', toolCalls: [scriptedCall('ask_user', { message: 'Which tea?', questions: ['Green or black?'] }, 'call_clarify')] },
      { agent: 'manager', content: 'Shall I start?' },
      { agent: 'manager', toolCalls: [scriptedCall('no_such_tool', {}, 'call_bogus'), runWorker('call_first')] },
      { agent: 'manager', toolCalls: [scriptedCall('ask_user', { message: 'What first?' }, 'call_ask')] },
      { agent: 'manager', toolCalls: [runWorker('call_second')] },
      { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { note: 'A haiku about green tea.' } })] },
      { agent: 'manager', toolCalls: [scriptedCall('ask_user', { questions: ['Another one?'] }, 'call_more')] },
      { agent: 'manager', toolCalls: [scriptedCall('finish', { summary: 'The note is accepted.' }, 'call_finish')] },
    ]);
    const store = new MemoryStore();
    const runtime = createRuntime({ model, store });
    const session = await runtime.createSession({ packageId: 'tiny' });
    const sends = [
      // A request that starts the way the chart's notes do is still the person's.
      { type: 'user_submitted_input', text: 'The user wants a haiku about tea.' },
      { type: 'user_answered_questions', answers: { q1: 'Green.' } },
      { type: 'user_confirmed_intake' },
      { type: 'user_rejected_next_step', reason: 'Ask me first.' },
      { type: 'user_submitted_input', text: 'Restate my request.' },
      { type: 'user_approved_next_step', edits: { reason: 'Restate it as a haiku.' }, by: 'ana' },
      { type: 'user_accepted_artifact', artifactId: 'a1' },
      { type: 'user_answered_questions', answers: { q1: 'No.' } },
    ] as const;
    for (const event of sends) {
      const result = await session.send(event);
      expect(result.ok, JSON.stringify(result)).toBe(true);
    }
    expect(session.view().phase).toBe('done');
    model.assertComplete();

    const context = storedSnapshot(runtime.machine, (await store.load(session.id))!).context;
    const messages = messagesOf(context);
    const contents = (role: string) => messages.filter((m) => m.role === role).map((m) => ('content' in m ? m.content : undefined));
    expect(contents('user')).toEqual([
      'The user wants a haiku about tea.',
      'Answers to the clarifying questions:\n- Green or black?\n  → Green.',
      'Restate my request.',
      '- Another one?\n  → No.',
    ]);
    expect(contents('assistant')).toEqual([
      'Let me read it.',
      'Which tea?\n- Green or black?',
      'Shall I start?',
      undefined,
      'What first?',
      undefined,
      '- Another one?',
      'The note is accepted.',
    ]);
    // The approvals' own calls stay (an interrupt names one), with their results; nothing else of the loop does.
    const calls = messages.flatMap((m) => ('toolCalls' in m ? (m.toolCalls ?? []) : [])).map((c) => c.id);
    expect(calls).toEqual(['call_first', 'call_second']);
    expect(messages.filter((m) => m.role === 'tool').map((m) => ('toolCallId' in m ? m.toolCallId : ''))).toEqual(['call_first', 'call_second']);
    // Each of these notes is in the manager's transcript (the model reads them), none in the chat.
    const transcript = JSON.stringify(context.transcripts.manager.messages);
    const text = JSON.stringify(messages);
    for (const note of ['The user confirmed', 'The user rejected', 'The user (ana) approved', 'The user accepted', 'Reply by calling', 'The user answered']) {
      expect(transcript).toContain(note);
      expect(text).not.toContain(note);
    }
    // Ids are the transcript's numbers: the same from run to run.
    expect(messages.map((m) => m.id)).toEqual(messagesOf(storedSnapshot(runtime.machine, (await store.load(session.id))!).context).map((m) => m.id));
    expect(new Set(messages.map((m) => m.id)).size).toBe(messages.length);
  });

  it('shows a worker’s MCP calls with their arguments and results where they happened: after the step that ran them, before what the manager heard next', async () => {
    const notes = notesPackage();
    const keeper = (id: string, requiresApproval: boolean) =>
      scriptedCall('run_worker', { workerId: 'keeper', reason: 'Keep the notes.', requiresApproval }, id);
    const model = new ScriptedModel([
      { agent: 'manager', toolCalls: [keeper('call_first', false)] },
      {
        agent: 'worker',
        content: 'Reading first.',
        toolCalls: [scriptedCall('notes__read_note', { path: 'a.md' }, 'c1'), scriptedCall('notes__write_note', { path: 'a.md', text: 'One' }, 'c2')],
      },
      { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { note: 'Kept.' } })] },
      { agent: 'manager', content: 'Next, another note.', toolCalls: [keeper('call_second', true)] },
    ]);
    const store = new MemoryStore();
    const runtime = createRuntime({ model, store, packagesDir: notes.packagesDir, toolHost: { env: notes.env, log: () => {} } });
    runtimes.push(runtime);
    const session = await runtime.createSession({ packageId: 'notes' });
    const chat = async () => {
      const snapshot = storedSnapshot(runtime.machine, (await store.load(session.id))!);
      const view = session.view();
      return messagesOf(snapshot.context, view.waitingReason).map((m) => {
        if (m.role === 'tool') return `tool ${m.toolCallId}: ${m.content}`;
        if (m.role === 'assistant' && m.toolCalls?.length) return `calls ${m.toolCalls.map((c) => `${c.function.name} ${c.function.arguments}`).join(', ')}`;
        return `${m.role}: ${'content' in m ? String(m.content) : ''}`;
      });
    };
    const request = ['user: Keep my notes.', 'calls run_worker {"workerId":"keeper","reason":"Keep the notes.","requiresApproval":false}'];
    const ran = expect.stringMatching(/^tool call_first: /);
    const calls = 'calls notes__read_note {"path":"a.md"}, notes__write_note {"path":"a.md","text":"One"}';

    // A call waits for a person: both calls are in the chat (an interrupt names c2), neither has a result yet; the worker's words are its own.
    expect((await session.send({ type: 'user_submitted_input', text: 'Keep my notes.' })).ok).toBe(true);
    expect(session.view().waitingReason).toBe('approve_tool');
    expect(await chat()).toEqual([...request, ran, calls]);

    // Run: each call's result follows it.
    expect((await session.send({ type: 'user_approved_tool_call', callId: 'c2' })).ok).toBe(true);
    expect(session.view().waitingReason).toBe('review_artifact');
    const done = [calls, 'tool c1: (no note at a.md)', 'tool c2: wrote a.md'];
    expect(await chat()).toEqual([...request, ran, ...done]);

    // The manager goes on: the calls stay where they happened, before what it said next.
    expect((await session.send({ type: 'user_accepted_artifact', artifactId: 'a1' })).ok).toBe(true);
    expect(session.view().waitingReason).toBe('approve_step');
    const next = await chat();
    expect(next).toEqual([
      ...request,
      ran,
      ...done,
      'calls run_worker {"workerId":"keeper","reason":"Keep the notes.","requiresApproval":true}',
      expect.stringMatching(/^tool call_second: /),
    ]);
    const snapshot = storedSnapshot(runtime.machine, (await store.load(session.id))!);
    const messages = messagesOf(snapshot.context, 'approve_step');
    // The manager's words of that reply are there too, and every id is its own.
    expect(messages.some((m) => m.role === 'assistant' && m.content === 'Next, another note.')).toBe(true);
    expect(new Set(messages.map((m) => m.id)).size).toBe(messages.length);
    model.assertComplete();
  });
});
