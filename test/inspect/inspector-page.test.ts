/**
 * The inspector page in a real browser (playwright-core driving Debian's chromium).
 * Skipped — with a message — only when /usr/bin/chromium is missing outside CI; in CI
 * (CI=true) these tests always run, and fail if the browser cannot start.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime, MemoryStore, SqliteStore, type Model, type Runtime, type Session } from '../../src/index.js';
import type { SessionStore } from '../../src/store.js';
import { DemoModel } from '../../src/testing.js';
import { startInspector, type InspectorHandle } from '../../src/inspect/server.js';
import { ManualModel } from '../../src/models/manual-model.js';
import { buildPage } from './page-build.js';
import { chromiumMissing, runLayoutsDir } from '../support/chromium.js';
import { workerPages } from '../support/kept-pages.js';
import { testScript } from '../support/script-build.js';

const skip = chromiumMissing('inspector page');

const run = promisify(execFile);

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

async function serve(runtime: Runtime, store: SessionStore, sessionId?: string): Promise<InspectorHandle> {
  const inspector = await startInspector({ runtime, store, port: 0, layoutsDir: runLayoutsDir(), pageDir, log: () => {}, ...(sessionId ? { sessionId } : {}) });
  cleanups.push(() => inspector.close());
  return inspector;
}

async function newPage(): Promise<Page> {
  const page = await workerPages().take({ width: 1600, height: 1000 });
  page.on('pageerror', (error) => console.error('[page error]', error));
  cleanups.push(() => workerPages().release(page));
  return page;
}

const activeLeaf = (page: Page) => page.getAttribute('#diagram-svg .state.active-leaf', 'data-path');
// The first drawing lays the chart out (ELK in a worker): seconds on a busy machine, so the waits are generous.
const waitForActive = (page: Page, path: string) => page.waitForSelector(`#diagram-svg .state.active-leaf[data-path="${path}"]`, { timeout: 30_000 });

describe.skipIf(skip)('the inspector page', { timeout: 60_000 }, () => {
  let dir: string;
  let dbPath: string;
  let store: SqliteStore;
  let runtime: Runtime;
  let session: Session;
  let inspector: InspectorHandle;
  let page: Page;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'steward-inspector-'));
    dbPath = join(dir, 'steward.db');
    store = new SqliteStore(dbPath);
    runtime = createRuntime({ model: new DemoModel(), store });
    session = await runtime.createSession({ packageId: 'tiny' });
    inspector = await serve(runtime, store, session.id);
    page = await newPage();
    cleanups.push(async () => {
      for (const s of runtime.live.values()) s.stop();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    });
  });

  it('opens, draws the statechart and highlights the active state', async () => {
    await page.goto(inspector.url);
    await waitForActive(page, 'waiting_user.intake');
    expect(await page.textContent('#state-name')).toBe('waiting_user.intake');
    // The whole machine: every state node and every transition (internal ones listed in their state).
    expect(await page.locator('#diagram-svg .state').count()).toBe(runtime.machine.root ? countStates(runtime) : 0);
    expect(await page.locator('#diagram-svg [data-edge-id]:not(.edge-label)').count()).toBe(countTransitions(runtime));
    expect(await page.getAttribute('#diagram-svg .state[data-path="waiting_user"]', 'class')).toContain('active');
    expect(await page.textContent('#diagram-svg')).toContain('user_confirmed_intake');
    expect(await page.textContent('#diagram-svg')).toContain('[hasRequest]');
    // Transitions leaving the active state are highlighted too.
    expect(await page.locator('#diagram-svg g.transition.hot[data-event="user_submitted_input"]').count()).toBeGreaterThan(0);
    // Enabled events are offered as controls: what the guards allow, not all the state declares
    // (no request to confirm and no question card yet in intake).
    const offered = await page.locator('#events form[data-event]').evaluateAll((forms) => forms.map((f) => (f as HTMLElement).dataset.event));
    expect(offered).toEqual(session.enabledEvents());
    expect(offered).toEqual(['user_submitted_input']);
    expect(session.view().acceptedEvents).toContain('user_skipped_questions');
  });

  it('a refused event shows the refusal message', async () => {
    // Events that are not enabled can be tried, to see why they are refused.
    await page.check('#show-all');
    await page.click('form[data-event="user_confirmed_intake"] button');
    await expect.poll(() => page.textContent('#send-result.refusal')).toMatch(/There is no request to confirm yet/);
    expect(await activeLeaf(page)).toBe('waiting_user.intake');
    await expect.poll(() => page.textContent('#rejections')).toMatch(/user_confirmed_intake/);
    await page.click('form[data-event="user_approved_next_step"] button');
    await expect.poll(() => page.textContent('#send-result.refusal')).toMatch(/"user_approved_next_step" is not accepted while the session waits in intake/);
    await page.uncheck('#show-all');
  });

  it('clicking an enabled event moves the session and the highlight', async () => {
    await page.fill('form[data-event="user_submitted_input"] textarea', 'A note about green tea.');
    await page.click('form[data-event="user_submitted_input"] button');
    await waitForActive(page, 'waiting_user.approve_step');
    expect(session.view().state).toBe('waiting_user.approve_step');
    expect(await page.textContent('#pending-step')).toContain('echo');
    expect(await page.textContent('#burst')).toMatch(/burst \d+\/12/);
    await page.click('form[data-event="user_approved_next_step"] button');
    await waitForActive(page, 'waiting_user.review_artifact');
    expect(await page.inputValue('form[data-event="user_accepted_artifact"] input[name="artifactId"]')).toBe(session.view().artifact!.id);
    expect(await page.textContent('#artifact')).toContain('green tea');
  });

  it("the timeline's time travel shows an earlier state, read-only", async () => {
    await page.click('#timeline li[data-seq="1"] button');
    await expect.poll(() => page.textContent('#travel-state')).toBe('waiting_user.intake');
    await waitForActive(page, 'waiting_user.intake');
    expect(await page.getAttribute('#diagram-svg', 'class')).toContain('time-travel');
    expect(await page.locator('#events form').count()).toBe(0);
    const running = (await store.journal(session.id)).find((e) => e.state === 'running.manager.thinking')!;
    await page.click(`#timeline li[data-seq="${running.seq}"] button`);
    await expect.poll(() => page.textContent('#travel-state')).toBe('running.manager.thinking');
    await waitForActive(page, 'running.manager.thinking');
    await page.click('#back-to-live');
    await waitForActive(page, 'waiting_user.review_artifact');
    expect(await page.getAttribute('#diagram-svg', 'class')).not.toContain('time-travel');
  });

  it('a request without the token is refused', async () => {
    const origin = new URL(inspector.url).origin;
    const revision = (await store.load(session.id))!.revision;
    expect((await page.request.get(`${origin}/api/info`)).status()).toBe(403);
    expect((await page.request.get(`${origin}/api/sessions/${session.id}`)).status()).toBe(403);
    const post = await page.request.post(`${origin}/api/sessions/${session.id}/events`, {
      data: { type: 'user_accepted_artifact', artifactId: session.view().artifact!.id },
    });
    expect(post.status()).toBe(403);
    expect((await store.load(session.id))!.revision).toBe(revision);
    const other = await newPage();
    await other.goto(`${origin}/?session=${session.id}`);
    await expect.poll(() => other.textContent('#fatal')).toMatch(/needs its token/);
  });

  it('lists the sessions of the store and opens any of them', async () => {
    await expect.poll(() => page.getAttribute(`#sessions [data-session-id="${session.id}"]`, 'class')).toContain('selected');
    await page.selectOption('#new-package', 'tiny');
    await page.click('#new-session button');
    await expect.poll(() => page.locator('#sessions [data-session-id]').count()).toBe(2);
    await expect.poll(() => page.textContent('.session-title')).not.toBe(session.id);
    await waitForActive(page, 'waiting_user.intake');
    expect(new URL(page.url()).searchParams.get('session')).not.toBe(session.id);
    await page.click(`#sessions [data-session-id="${session.id}"]`);
    await expect.poll(() => page.textContent('.session-title')).toBe(session.id);
    await waitForActive(page, 'waiting_user.review_artifact');
  });

  it('follows a session that another process (the CLI) moves', async () => {
    const before = await page.locator('#timeline li').count();
    const artifactId = session.view().artifact!.id;
    session.stop(); // this process lets go of it; the "CLI" resumes it from the store
    const { stdout } = await run(process.execPath, [
      testScript('test/inspect/fixtures/cli-step.ts'),
      dbPath,
      session.id,
      JSON.stringify({ type: 'user_rejected_artifact', artifactId, reason: 'make it shorter' }),
    ]);
    expect(JSON.parse(stdout)).toMatchObject({ ok: true, state: 'waiting_user.revision' });
    await waitForActive(page, 'waiting_user.revision');
    await expect.poll(() => page.locator('#timeline li').count()).toBeGreaterThan(before);
    expect(await page.textContent('#timeline')).toContain('user_rejected_artifact');

    // The page can still drive the session: it resumes it in this process.
    await page.fill('form[data-event="user_submitted_input"] textarea', 'Two sentences, please.');
    await page.click('form[data-event="user_submitted_input"] button');
    await waitForActive(page, 'waiting_user.review_artifact');
    await expect.poll(() => page.textContent('#artifact')).toContain('Revised after your notes: make it shorter');

    mkdirSync('test-results', { recursive: true });
    mkdirSync('docs', { recursive: true });
    await page.screenshot({ path: 'test-results/inspector.png', fullPage: true });
    // README's picture: refreshed on request only, so a test run never dirties the work tree.
    if (process.env.STEWARD_UPDATE_DOCS === '1') await page.screenshot({ path: 'docs/inspector.png' });
  });
});

describe.skipIf(skip)('the inspector page with the manual model', { timeout: 60_000 }, () => {
  it('shows the pending request and answers it with a tool call', async () => {
    const model = new ManualModel();
    const store = new MemoryStore();
    const runtime = createRuntime({ model, store });
    const session = await runtime.createSession({ packageId: 'tiny' });
    cleanups.push(() => session.stop());
    const inspector = await serve(runtime, store, session.id);
    const page = await newPage();
    await page.goto(inspector.url);
    await waitForActive(page, 'waiting_user.intake');
    await expect.poll(() => page.textContent('#model-idle')).toMatch(/No request is waiting/);

    await page.fill('form[data-event="user_submitted_input"] textarea', 'Something about tea.');
    await page.click('form[data-event="user_submitted_input"] button');
    await page.waitForSelector('form.model-request[data-request-id="m1"]');
    expect(await page.textContent('form.model-request h3')).toContain('manager asks');
    await waitForActive(page, 'running.manager.thinking');

    await page.selectOption('form.model-request .tool-picker', 'ask_user');
    await page.fill('form.model-request .tool-args', JSON.stringify({ message: 'Green or black tea?' }));
    await page.click('form.model-request .reply-send');
    await waitForActive(page, 'waiting_user.intake');
    await expect.poll(() => page.textContent('#details')).toContain('Green or black tea?');
    expect(model.pending()).toEqual([]);
    await page.screenshot({ path: 'test-results/inspector-manual-model.png', fullPage: true });
  });
});

describe.skipIf(skip)('a long session', () => {
  it('shows a session with 1,000 journal entries (timed)', async () => {
    // A model that only ever reads the blackboard: every round is a loop tool, so each user
    // input is followed by maxBurst journaled manager rounds and a burst-limit notice.
    const reader: Model = {
      label: 'reader',
      complete: async () => ({
        content: null,
        toolCalls: [
          { id: `r${Math.random().toString(36).slice(2)}`, type: 'function', function: { name: 'read_blackboard', arguments: '{"tags":["request"]}' } },
        ],
      }),
    };
    const store = new MemoryStore();
    const runtime = createRuntime({ model: reader, store });
    const session = await runtime.createSession({ packageId: 'tiny' });
    cleanups.push(() => session.stop());
    let count = 1;
    for (let i = 0; count < 1000; i++) {
      const left = 1000 - count;
      // A full burst adds 13 entries; near the end, refused events (1 entry each) fill up exactly.
      await session.send(left >= 13 ? { type: 'user_submitted_input', text: `round ${i}` } : { type: 'user_approved_next_step' });
      // The entries after the last counted one (the journal numbers them from 1 without gaps):
      // reading the whole journal again after each send copied it a thousand times over.
      count += (await store.journal(session.id, { afterSeq: count })).length;
    }
    expect(count).toBe(1000);

    const inspector = await serve(runtime, store, session.id);
    const page = await newPage();
    const started = Date.now();
    await page.goto(inspector.url);
    await page.waitForFunction(() => document.querySelector<HTMLElement>('#timeline')?.dataset.count === '1000', undefined, { timeout: 30_000 });
    const timelineMs = Date.now() - started;
    await page.waitForSelector('body[data-diagram="ready"]');
    const diagramMs = Date.now() - started;
    const travelStarted = Date.now();
    await page.click('#timeline li[data-seq="1000"] button');
    await page.waitForSelector('#travel-state');
    const travelMs = Date.now() - travelStarted;
    await page.click('#timeline li[data-seq="500"] button');
    await expect.poll(() => page.textContent('#travel-banner')).toContain('#500');
    console.log(
      `[inspector] 1,000-entry session: timeline rendered ${timelineMs} ms after navigation; statechart drawn at ${diagramMs} ms; time travel to entry #1000 (replay of 999 events) ${travelMs} ms.`,
    );
  }, 60_000);
});

function countStates(runtime: Runtime): number {
  const count = (node: Runtime['machine']['root']): number => 1 + Object.values(node.states).reduce((n, c) => n + count(c), 0);
  return count(runtime.machine.root);
}

function countTransitions(runtime: Runtime): number {
  const count = (node: Runtime['machine']['root']): number =>
    [...node.transitions.values()].reduce((n, list) => n + list.length, 0) +
    (node.always?.length ?? 0) +
    Object.values(node.states).reduce((n, c) => n + count(c), 0);
  return count(runtime.machine.root);
}
