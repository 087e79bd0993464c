/**
 * The inspector decides as `admin` (it is local and holds the database): it approves a step
 * whose worker names its approvers (front matter `approvers`), whatever groups the page names,
 * and the journal records the event with `groups: ['admin']`.
 */
import { afterEach, beforeAll, expect, it } from 'vitest';
import { createRuntime, MemoryStore } from '../../src/index.js';
import { startInspector, type InspectorHandle } from '../../src/inspect/server.js';
import { DemoModel } from '../../src/testing.js';
import { useTempDir } from '../support/temp.js';
import { tinyDecidedBy } from '../support/decided-package.js';
import { buildPage } from './page-build.js';

const temp = useTempDir('steward-inspect-deciders-');
let pageDir = '';
beforeAll(async () => {
  pageDir = await buildPage();
}, 60_000);

const open: InspectorHandle[] = [];
afterEach(async () => {
  while (open.length) await open.pop()!.close();
});

it('approves a step only the ops group decides, as admin, whatever groups the page names', async () => {
  const packagesDir = tinyDecidedBy(temp.path('packages'), 'ops');
  const store = new MemoryStore();
  const runtime = createRuntime({ model: new DemoModel(), store, packagesDir });
  const session = await runtime.createSession({ packageId: 'tiny' });
  expect((await session.send({ type: 'user_submitted_input', text: 'Tea.' })).view.waitingReason).toBe('approve_step');
  // From code, without groups: the wait's deciders refuse it.
  expect(await session.send({ type: 'user_approved_next_step' })).toMatchObject({ ok: false, error: { code: 'not_a_decider' } });

  const inspector = await startInspector({ runtime, store, port: 0, sessionId: session.id, pageDir, log: () => {} });
  open.push(inspector);
  const res = await fetch(`${new URL(inspector.url).origin}/api/sessions/${session.id}/events`, {
    method: 'POST',
    headers: { 'x-steward-token': inspector.token, 'content-type': 'application/json' },
    body: JSON.stringify({ type: 'user_approved_next_step', groups: ['dev'] }),
  });
  expect(await res.json()).toMatchObject({ ok: true });
  const approved = (await store.journal(session.id)).filter((e) => e.type === 'user_approved_next_step').map((e) => e.payload);
  expect(approved.at(-1)).toMatchObject({ groups: ['admin'], through: 'inspector' });
});
