/**
 * A fan-out decided in the inspector page (real chromium, as inspector-page.test.ts): the
 * manager proposes three independent workers at once (the trio package). The details show the
 * team; each proposed step has its own approve and reject form, each artifact of the fan-in
 * its own accept and reject form; the live line says which workers write at once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime, SqliteStore } from '../../src/index.js';
import { startInspector } from '../../src/inspect/server.js';
import { runTogether, submitOwn, TRIO, TrioModel, trioPackage } from '../support/trio-package.js';
import { chromiumMissing, runLayoutsDir } from '../support/chromium.js';
import { workerPages } from '../support/kept-pages.js';
import { buildPage } from './page-build.js';

const skip = chromiumMissing('inspector fan-out');

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

describe.skipIf(skip)('the inspector page, a fan-out', () => {
  it('decides each proposed step and each artifact in its own form, and shows the workers writing at once', async () => {
    // The workers answer only once the test has seen them write together.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const model = new TrioModel([runTogether(TRIO, true)], async (id) => {
      await released;
      return submitOwn(id);
    });
    const dir = mkdtempSync(join(tmpdir(), 'steward-inspector-fan-out-'));
    const store = new SqliteStore(join(dir, 'steward.db'));
    const runtime = createRuntime({ model, store, packagesDir: trioPackage(join(dir, 'pkgs')) });
    const session = await runtime.createSession({ packageId: 'trio' });
    await session.send({ type: 'user_submitted_input', text: 'Notes from three sides.' });
    const inspector = await startInspector({ runtime, store, port: 0, layoutsDir: runLayoutsDir(), pageDir, log: () => {}, sessionId: session.id });
    cleanups.push(async () => {
      release();
      await inspector.close();
      await runtime.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    });
    const page = await workerPages().take({ width: 1600, height: 1000 });
    page.on('pageerror', (error) => console.error('[page error]', error));
    cleanups.push(() => workerPages().release(page));
    await page.goto(inspector.url);

    // The team in the details, and one approve and one reject form per proposed step.
    await page.waitForSelector('form[data-event="user_approved_next_step"][data-item="run_east"]');
    expect(await page.locator('#team li[data-status="proposed"]').count()).toBe(3);
    expect(await page.locator('form[data-event="user_approved_next_step"]').count()).toBe(3);
    expect(await page.locator('form[data-event="user_rejected_next_step"]').count()).toBe(3);
    expect(await page.textContent('form[data-event="user_rejected_next_step"][data-item="run_south"] .item-heading')).toBe(
      'south (run_south) · reject: it does not run; the manager is told',
    );

    await page.click('form[data-event="user_approved_next_step"][data-item="run_north"] button');
    await page.waitForSelector('form[data-event="user_approved_next_step"][data-item="run_north"]', { state: 'detached' });
    expect(await page.getAttribute('#team li[data-item="run_north"]', 'data-status')).toBe('approved');
    await page.fill('form[data-event="user_rejected_next_step"][data-item="run_south"] input[name="reason"]', 'Not the south.');
    await page.click('form[data-event="user_rejected_next_step"][data-item="run_south"] button');
    await page.waitForSelector('#team li[data-item="run_south"]', { state: 'detached' });
    // The inspector's hub follows the live session on its next poll: the workers' progress reaches
    // the page only once it listens, so it must before they start.
    await expect.poll(() => session.listenerCount, { timeout: 10_000 }).toBeGreaterThan(0);
    // The last step, approved with its reason edited: both approved workers start together.
    await page.fill('form[data-event="user_approved_next_step"][data-item="run_east"] input[name="reason"]', 'East, briefly.');
    await page.click('form[data-event="user_approved_next_step"][data-item="run_east"] button');

    await expect.poll(() => page.textContent('#live-progress'), { timeout: 30_000 }).toMatch(/writing at once: (north, east|east, north)/);
    expect(model.inFlight).toBe(2);
    release();

    // The fan-in: each artifact under review in the team, and its own accept and reject form.
    await expect.poll(() => session.view().state, { timeout: 30_000 }).toBe('waiting_user.review_artifact');
    const byWorker = Object.fromEntries(session.view().team!.map((t) => [t.workerId, t.artifact!.id]));
    await page.waitForSelector(`form[data-event="user_accepted_artifact"][data-item="run_east"]`);
    expect(await page.locator('#team .team-artifact').count()).toBe(2);
    expect(await page.textContent(`#team [data-artifact="${byWorker.east}"] pre`)).toBe('The east note.');
    expect(await page.locator('form[data-event="user_accepted_artifact"]').count()).toBe(2);
    await page.fill('form[data-event="user_rejected_artifact"][data-item="run_east"] input[name="reason"]', 'Too brief.');
    await page.click('form[data-event="user_rejected_artifact"][data-item="run_east"] button');
    await page.waitForSelector('form[data-event="user_rejected_artifact"][data-item="run_east"]', { state: 'detached' });
    // One artifact left: its form is the usual one, prefilled with it.
    expect(await page.inputValue('form[data-event="user_accepted_artifact"] input[name="artifactId"]')).toBe(byWorker.north);
    await page.click('form[data-event="user_accepted_artifact"] button');
    await expect.poll(() => session.view().state, { timeout: 30_000 }).toBe('done');

    const decisions = (await store.journal(session.id))
      .filter((e) => e.kind === 'event' && e.type !== 'user_submitted_input')
      .map((e) => e.payload as { type: string; item?: string; artifactId?: string; edits?: unknown; reason?: string });
    expect(decisions).toMatchObject([
      { type: 'user_approved_next_step', item: 'run_north' },
      { type: 'user_rejected_next_step', item: 'run_south', reason: 'Not the south.' },
      { type: 'user_approved_next_step', item: 'run_east', edits: { reason: 'East, briefly.' } },
      { type: 'user_rejected_artifact', artifactId: byWorker.east, reason: 'Too brief.' },
      { type: 'user_accepted_artifact', artifactId: byWorker.north },
    ]);
    expect(decisions[0]).not.toHaveProperty('edits');
  }, 90_000);
});
