/**
 * The two waits of a worker's MCP tool call over `steward serve`'s own routes: the OpenAPI
 * document lists their events and reasons (it is made from the zod schemas), POST
 * /sessions/{id}/events takes the answers to a server's form (checked against that form) and
 * a result given by hand for a cut-off call, and steward/client's typed `answer` and the
 * SessionFeed under React's useSession pass them through.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { StewardClient } from '../../src/client.js';
import { SessionFeed } from '../../src/client/session-feed.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import { startServe } from '../../src/serve/server.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { WaitingReasonSchema } from '../../src/core/machines/stream-events.js';
import type { ScriptedModel } from '../../src/testing.js';
import { notesPackage, type NotesPackage } from '../tools/notes-package.js';
import { BAD_INITIALS, callsModel, CONFIRMED, confirmWrite, cutOffCalls, GIVEN, READ_GIVEN, writeNote } from '../tools/tool-wait-sessions.js';
import { client } from './http.js';

const open: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close();
});

const TOKEN = 'tool-waits-http-token';

async function serve(notes: NotesPackage, model: ScriptedModel, machine?: typeof cutOffCalls) {
  const store = new MemoryStore();
  const runtime = createRuntime({ model, store, packagesDir: notes.packagesDir, toolHost: { env: notes.env, log: () => {} }, ...(machine ? { machine } : {}) });
  const server = await startServe({ runtime, store, port: 0, token: TOKEN, log: () => {} });
  open.push(async () => {
    await server.close();
    await runtime.close();
  });
  return { server, http: client(server.url, TOKEN) };
}

/** A new notes session whose worker's call `c1` was approved: it waits in tool_input or tool_interrupted. */
async function approvedCall(http: ReturnType<typeof client>) {
  const id: string = (await http.post('/sessions', { packageId: 'notes' })).body.view.id;
  const first = await http.post(`/sessions/${id}/events`, { type: 'user_submitted_input', text: 'Write a.md.' });
  expect(first.body.view.waitingReason).toBe('approve_tool');
  const approved = await http.post(`/sessions/${id}/events`, { type: 'user_approved_tool_call', callId: 'c1' });
  expect(approved.status, JSON.stringify(approved.body)).toBe(200);
  return { id, view: approved.body.view };
}

describe('tool waits over the HTTP routes', { timeout: 120_000 }, () => {
  it('the OpenAPI document lists both events with their fields, and both waiting reasons', async () => {
    const { http } = await serve(notesPackage(), callsModel().model);
    const doc = (await http.get('/openapi.json')).body;
    const events: Array<{ properties: Record<string, { enum?: string[] }>; required: string[] }> =
      doc.paths['/sessions/{id}/events'].post.requestBody.content['application/json'].schema.oneOf;
    const event = (type: string) => events.find((e) => e.properties.type?.enum?.[0] === type);
    expect(event('user_answered_tool_input')?.required.sort()).toEqual(['callId', 'responses', 'type']);
    expect(event('user_gave_tool_result')?.required.sort()).toEqual(['callId', 'result', 'type']);
    const view = doc.paths['/sessions/{id}'].get.responses['200'].content['application/json'].schema.properties.view;
    expect(view.properties.waitingReason.enum).toEqual(WaitingReasonSchema.options);
    expect(view.properties.waitingReason.enum).toEqual(expect.arrayContaining(['tool_input', 'tool_interrupted']));
    expect(view.properties.enabledEvents.items.enum).toEqual(expect.arrayContaining(['user_answered_tool_input', 'user_gave_tool_result']));
  });

  it('POST user_answered_tool_input: an answer the form refuses is a 400 and reaches no server; a good one completes the call (once, however often it is sent)', async () => {
    const notes = notesPackage();
    const { model, read } = callsModel(confirmWrite());
    const { http } = await serve(notes, model);
    const { id, view } = await approvedCall(http);
    expect(view).toMatchObject({ waitingReason: 'tool_input', enabledEvents: ['user_answered_tool_input'] });
    expect(view.toolCalls[0]).toMatchObject({
      callId: 'c1',
      status: 'asking',
      input: { requests: [{ key: 'confirm', mode: 'form', message: 'Write a.md?' }] },
    });

    const bad = await http.post(`/sessions/${id}/events`, { type: 'user_answered_tool_input', callId: 'c1', responses: BAD_INITIALS });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ ok: false, error: { code: 'invalid_event' }, view: { waitingReason: 'tool_input' } });
    expect(bad.body.error.message).toMatch(/content\/initials must NOT have fewer than 2 characters/);

    const answer = { type: 'user_answered_tool_input', callId: 'c1', responses: CONFIRMED, wait: view.wait };
    const good = await http.post(`/sessions/${id}/events`, answer);
    expect(good.status, JSON.stringify(good.body)).toBe(200);
    expect(good.body.view.waitingReason).toBe('review_artifact');
    expect(read).toEqual(['wrote a.md, confirmed by AB']);
    // The same answer for the same wait again: a harmless repeat, nothing sent to the server.
    const again = await http.post(`/sessions/${id}/events`, answer);
    expect([again.status, again.body.repeated]).toEqual([200, true]);
    expect(notes.calls()).toEqual([
      { tool: 'confirm_write?', args: { path: 'a.md', text: 'One' } },
      { tool: 'confirm_write', args: { path: 'a.md', text: 'One', answer: CONFIRMED.confirm } },
    ]);
    model.assertComplete();
  });

  it('user_gave_tool_result through steward/client’s answer, and through the SessionFeed useSession sends with', async () => {
    const notes = notesPackage();
    const { model, read } = callsModel(writeNote(), writeNote());
    const { server, http } = await serve(notes, model, cutOffCalls);
    const steward = new StewardClient({ baseUrl: server.url, token: TOKEN });

    const first = await approvedCall(http);
    expect(first.view).toMatchObject({
      waitingReason: 'tool_interrupted',
      enabledEvents: ['user_approved_tool_call', 'user_rejected_tool_call', 'user_gave_tool_result'],
    });
    const given = await steward.answer(first.view, { type: 'user_gave_tool_result', callId: 'c1', result: GIVEN });
    expect(given.ok && given.view.waitingReason).toBe('review_artifact');

    const second = await approvedCall(http);
    const feed = new SessionFeed(steward, second.id);
    // What the page offers once the feed has the view: the wait's three decisions.
    const offered = new Promise<readonly string[]>((resolve) => {
      const stop = feed.subscribe(() => {
        const { enabledEvents } = feed.snapshot();
        if (enabledEvents.length === 0) return;
        stop();
        resolve(enabledEvents);
      });
    });
    feed.start();
    open.push(async () => feed.stop());
    expect(await offered).toEqual(['user_approved_tool_call', 'user_rejected_tool_call', 'user_gave_tool_result']);
    const sent = await feed.send({ type: 'user_gave_tool_result', callId: 'c1', result: GIVEN });
    expect(sent).toMatchObject({ ok: true, view: { waitingReason: 'review_artifact' } });
    expect(read).toEqual([READ_GIVEN, READ_GIVEN]);
    // Neither cut-off call ran again.
    expect(notes.calls()).toEqual([]);
    model.assertComplete();
  });
});
