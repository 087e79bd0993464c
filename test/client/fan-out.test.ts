/**
 * steward/client deciding a fan-out over HTTP against a real `steward serve`: the view's team
 * arrives typed, each proposed step is decided by its `item` and each artifact of the fan-in
 * by its id, one send each, with the wait the view shows; `proposedItems` / `reviewedItems`
 * say which wait now.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { proposedItems, reviewedItems, StewardClient, type SessionView } from '../../src/client.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import { startServe, type ServeHandle } from '../../src/serve/server.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { useTempDir } from '../support/temp.js';
import { runTogether, submitOwn, TRIO, TrioModel, trioPackage } from '../support/trio-package.js';

const TOKEN = 'client-fan-out-token';
const temp = useTempDir('steward-client-fan-out-');
let server: ServeHandle;
let client: StewardClient;
let model: TrioModel;

beforeEach(async () => {
  const store = new MemoryStore();
  model = new TrioModel([runTogether(TRIO, true)], (id) => submitOwn(id));
  const runtime = createRuntime({ model, store, packagesDir: trioPackage(temp.path('pkgs')) });
  server = await startServe({ runtime, store, port: 0, token: TOKEN, log: () => {} });
  client = new StewardClient({ baseUrl: server.url, token: TOKEN });
});
afterEach(async () => {
  await server.close();
});

/** The view of a send that must have been taken. */
function taken(answer: Awaited<ReturnType<StewardClient['answer']>>): SessionView {
  expect(answer.ok, JSON.stringify(answer)).toBe(true);
  return answer.view;
}

it('decides three proposed steps by item and two artifacts by id, one send each', async () => {
  const { view: created } = await client.create({ packageId: 'trio' });
  let view = taken(await client.answer(created, { type: 'user_submitted_input', text: 'Notes from three sides.' }));
  expect(view.waitingReason).toBe('approve_step');
  expect(view.pendingStep).toBeUndefined();
  expect(proposedItems(view).map((t) => [t.item, t.workerId, t.approvalRequiredBy])).toEqual([
    ['run_north', 'north', 'model'],
    ['run_south', 'south', 'model'],
    ['run_east', 'east', 'model'],
  ]);

  // Without an item the session refuses it, and says how to name one.
  const unnamed = await client.answer(view, { type: 'user_approved_next_step' });
  expect(unnamed).toMatchObject({ ok: false, error: { code: 'event_refused' } });
  expect(unnamed.ok ? '' : unnamed.error.message).toContain('name the step with "item"');

  view = taken(await client.answer(view, { type: 'user_approved_next_step', item: 'run_north' }));
  expect(view.team?.map((t) => t.status)).toEqual(['approved', 'proposed', 'proposed']);
  view = taken(await client.answer(view, { type: 'user_rejected_next_step', item: 'run_south', reason: 'Not the south.' }));
  expect(proposedItems(view).map((t) => t.item)).toEqual(['run_east']);
  expect(model.started.size).toBe(0);
  view = taken(await client.answer(view, { type: 'user_approved_next_step', item: 'run_east', edits: { reason: 'East, briefly.' } }));

  // The fan-in: both artifacts under review, each decided by its id.
  expect(view.waitingReason).toBe('review_artifact');
  const reviewed = reviewedItems(view);
  expect(reviewed.map((t) => [t.item, t.artifact.workerId, t.artifact.tags[0]!.body])).toEqual([
    ['run_north', 'north', 'The north note.'],
    ['run_east', 'east', 'The east note.'],
  ]);
  expect(view.artifact?.id).toBe(reviewed[0]!.artifact.id);
  const [north, east] = reviewed.map((t) => t.artifact.id);
  view = taken(await client.answer(view, { type: 'user_rejected_artifact', artifactId: east!, reason: 'Too brief.' }));
  expect(reviewedItems(view).map((t) => t.artifact.id)).toEqual([north]);
  view = taken(await client.answer(view, { type: 'user_accepted_artifact', artifactId: north! }));
  expect(view.state).toBe('done');
  expect(Object.fromEntries(view.artifacts.map((a) => [a.workerId, a.status]))).toEqual({ north: 'accepted', east: 'rejected' });
  expect([...model.started.keys()].sort()).toEqual(['east', 'north']);

  // The journal holds each decision with the item or artifact it named.
  const { entries } = await client.journal(created.id);
  const decisions = entries
    .filter((e) => e.kind === 'event' && e.type !== 'user_submitted_input')
    .map((e) => e.payload as { type: string; item?: string; artifactId?: string });
  expect(decisions.map((d) => [d.type, d.item ?? d.artifactId])).toEqual([
    ['user_approved_next_step', undefined],
    ['user_approved_next_step', 'run_north'],
    ['user_rejected_next_step', 'run_south'],
    ['user_approved_next_step', 'run_east'],
    ['user_rejected_artifact', east],
    ['user_accepted_artifact', north],
  ]);
});
