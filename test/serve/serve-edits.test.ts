/** `steward serve`: an accept whose edited body is blank is refused before the session sees it. */
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

it('refuses an artifact edit with an empty or whitespace-only body (400); the artifact stays under review', async () => {
  const store = new MemoryStore();
  const runtime = createRuntime({ model: new DemoModel(), store });
  const server = await startServe({ runtime, store, port: 0, log: () => {} });
  open.push(server);
  const http = client(server.url);
  const id: string = (await http.post('/sessions', { packageId: 'tiny' })).body.view.id;
  await http.post(`/sessions/${id}/events`, { type: 'user_submitted_input', text: 'Green tea.' });
  const approved = await http.post(`/sessions/${id}/events`, { type: 'user_approved_next_step' });
  expect(approved.body.view).toMatchObject({ waitingReason: 'review_artifact', artifact: { id: 'a1' } });
  for (const body of ['', ' \n ']) {
    const refused = await http.post(`/sessions/${id}/events`, { type: 'user_accepted_artifact', artifactId: 'a1', edits: { note: body } });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toContain('must not be empty or only whitespace');
  }
  expect((await http.get(`/sessions/${id}`)).body.view).toMatchObject({ waitingReason: 'review_artifact', artifact: { id: 'a1' } });
});
