/**
 * Issue 12 in the inspector page (real chromium, as inspector-page.test.ts): the approve
 * form edits the step, the accept form the artifact's bodies, "acting as" fills `by` (shown
 * in the timeline), and "Fork from here" on a timeline entry opens the fork.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime, SqliteStore } from '../../src/index.js';
import { DemoModel } from '../../src/testing.js';
import { startInspector } from '../../src/inspect/server.js';
import { buildPage } from './page-build.js';
import { chromiumMissing, runLayoutsDir } from '../support/chromium.js';
import { workerPages } from '../support/kept-pages.js';

const skip = chromiumMissing('inspector edits');

let pageDir: string;
const cleanups: (() => Promise<void> | void)[] = [];

beforeAll(async () => {
  if (skip) return;
  pageDir = await buildPage();
  await workerPages().ready();
}, 90_000);

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

describe.skipIf(skip)('the inspector page, issue 12', () => {
  it('edits before approving and while accepting, shows who acted, and forks from a timeline entry', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'steward-inspector-edits-'));
    const store = new SqliteStore(join(dir, 'steward.db'));
    const runtime = createRuntime({ model: new DemoModel(), store });
    const session = await runtime.createSession({ packageId: 'tiny' });
    const inspector = await startInspector({ runtime, store, port: 0, layoutsDir: runLayoutsDir(), pageDir, log: () => {}, sessionId: session.id });
    cleanups.push(async () => {
      await inspector.close();
      for (const s of runtime.live.values()) s.stop();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    });
    const page = await workerPages().take({ width: 1600, height: 1000 });
    cleanups.push(() => workerPages().release(page));
    await page.goto(inspector.url);
    // The answer to the request comes back late, after the person typed in the next wait's form
    // (a slow network): the page drew that form when the stream said the session waits, and keeps
    // what was typed in it when the answer arrives.
    let answerInput!: () => void;
    const inputAnswered = new Promise<void>((resolve) => (answerInput = resolve));
    await page.route('**/sessions/*/events', async (route) => {
      if ((route.request().postDataJSON() as { type?: string }).type !== 'user_submitted_input') return route.continue();
      const response = await route.fetch();
      await inputAnswered;
      await route.fulfill({ response });
    });
    await page.fill('#acting-as', 'dora');
    await page.fill('form[data-event="user_submitted_input"] textarea', 'A note about green tea.');
    await page.click('form[data-event="user_submitted_input"] button');
    await expect.poll(() => session.view().state, { timeout: 10_000 }).toBe('waiting_user.approve_step');

    // The approve form is prefilled with the proposed step; a changed reason is sent as edits.
    await expect
      .poll(() => page.inputValue('form[data-event="user_approved_next_step"] input[name="reason"]').catch(() => ''))
      .toBe(session.view().pendingStep!.reason);
    await page.fill('form[data-event="user_approved_next_step"] input[name="reason"]', 'One line, please.');
    answerInput();
    await expect.poll(() => page.textContent('#send-result')).toMatch(/^user_submitted_input accepted/);
    await expect.poll(() => page.evaluate(() => document.querySelectorAll('#events form').length)).toBeGreaterThan(0);
    expect(await page.inputValue('form[data-event="user_approved_next_step"] input[name="reason"]')).toBe('One line, please.');
    await page.click('form[data-event="user_approved_next_step"] button');
    await expect.poll(() => session.view().state, { timeout: 10_000 }).toBe('waiting_user.review_artifact');
    expect(session.view().pendingStep).toMatchObject({ reason: 'One line, please.', proposed: { by: 'dora' } });

    // The accept form holds each tag's body; only a changed one becomes a user version.
    const area = 'form[data-event="user_accepted_artifact"] textarea[data-edit-tag="note"]';
    await page.waitForSelector(area);
    await page.fill(area, 'Green tea, edited in the page.');
    await page.click('form[data-event="user_accepted_artifact"] button');
    await expect.poll(() => session.view().blackboard.find((b) => b.tag === 'note')?.writtenBy, { timeout: 10_000 }).toBe('dora');
    const journal = await store.journal(session.id);
    expect(journal.find((e) => e.type === 'user_accepted_artifact')!.payload).toMatchObject({ by: 'dora', edits: { note: 'Green tea, edited in the page.' } });

    // The timeline shows who acted.
    const approvedSeq = journal.find((e) => e.type === 'user_approved_next_step')!.seq;
    await expect.poll(() => page.textContent(`#timeline li[data-seq="${approvedSeq}"]`)).toContain('by dora');

    // "Fork from here" on the review entry opens the fork, which starts before the accept.
    const review = journal.find((e) => e.state === 'waiting_user.review_artifact')!;
    await page.click(`#timeline li[data-seq="${review.seq}"] button[data-fork]`);
    await expect.poll(() => page.textContent('#forked-from').catch(() => null), { timeout: 10_000 }).toBe(`forked from ${session.id} #${review.seq}`);
    const forkId = new URL(page.url()).searchParams.get('session')!;
    expect(forkId).not.toBe(session.id);
    const fork = await runtime.openSession(forkId);
    expect(fork.view()).toMatchObject({ state: 'waiting_user.review_artifact', forkedFrom: { id: session.id, seq: review.seq } });
    expect(fork.view().blackboard.find((b) => b.tag === 'note')).toMatchObject({ version: 1, writtenBy: 'echo' });
    expect(await page.textContent('#state-name')).toBe('waiting_user.review_artifact');
  }, 90_000);
});
