/** `steward serve` and issue 12: who acted (`by` in the event, else X-Steward-User), and edits over HTTP. */
import { afterEach, expect, it } from 'vitest';
import { DemoModel } from '../../src/models/demo-model.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import { startServe, type ServeHandle } from '../../src/serve/server.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { client } from './http.js';

const open: ServeHandle[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

it("journals the event's own `by`, else the X-Steward-User header; edits go through; a bad role is a 409 refusal", async () => {
  const store = new MemoryStore();
  const runtime = createRuntime({ model: new DemoModel(), store });
  const server = await startServe({ runtime, store, port: 0, log: () => {} });
  open.push(server);
  const http = client(server.url);
  const id: string = (await http.post('/sessions', { packageId: 'tiny' })).body.view.id;
  expect((await http.post(`/sessions/${id}/events`, { type: 'user_submitted_input', text: 'Green tea.' }, { 'x-steward-user': 'erin' })).status).toBe(200);
  const refused = await http.post(`/sessions/${id}/events`, { type: 'user_approved_next_step', edits: { roleId: 'poet' } });
  expect(refused.status).toBe(409);
  expect(refused.body.error.message).toContain('Role "poet" is not a role of worker "echo"');
  const approved = await http.post(
    `/sessions/${id}/events`,
    { type: 'user_approved_next_step', by: 'frank', edits: { reason: 'One line.' } },
    { 'x-steward-user': 'erin' },
  );
  expect(approved.status).toBe(200);
  expect(approved.body.view.pendingStep).toMatchObject({ reason: 'One line.', proposed: { by: 'frank' } });
  const tooLong = await http.post(`/sessions/${id}/events`, { type: 'user_accepted_artifact', artifactId: 'a1' }, { 'x-steward-user': 'x'.repeat(200) });
  expect(tooLong.status).toBe(400);
  const byOf = (await store.journal(id)).filter((e) => e.kind === 'event').map((e) => [e.type, (e.payload as { by?: string }).by]);
  expect(byOf).toEqual([
    ['user_submitted_input', 'erin'],
    ['user_approved_next_step', undefined],
    ['user_approved_next_step', 'frank'],
  ]);
});
