/**
 * Decision links in a real browser (playwright-core, Debian's chromium): the recipient opens
 * the link, sees the wait (the step and its reason, the artifact, the questions), decides
 * with the page's own form — approve, reject with a reason, accept, answer — and the session
 * moves, recorded as the recipient's decision via the link. The page's style passes its
 * Content-Security-Policy (nothing is blocked), and a form on another site's page that posts
 * to the link is refused. Skipped — with a message — only when /usr/bin/chromium is missing outside CI.
 */
import { startOtherSite } from '../support/other-site.js';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Model } from '../../src/core/models/model.js';
import type { SessionView } from '../../src/core/view.js';
import { DemoModel } from '../../src/models/demo-model.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import { startServe } from '../../src/serve/server.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { scriptedCall, ScriptedModel } from '../../src/testing.js';
import { client } from './http.js';
import { chromiumMissing } from '../support/chromium.js';
import { workerPages } from '../support/kept-pages.js';

const skip = chromiumMissing('decision links');

const TOKEN = 'links-page-token-0123456789';
const SECRET = 'links-browser-secret-0123456789abcdef0123456789';
let site: { origin: string; close: () => Promise<void> } | undefined;
let siteOrigin = '';
/** What the other site's page posts to: set per test. */
let forgedTarget = '';
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  if (skip) return;
  await workerPages().ready();
  // Another site, whose page holds a form that posts a decision to a link.
  site = await startOtherSite(
    () => `<!doctype html><html><body><form id="f" method="post" action="${forgedTarget}"><input name="decision" value="approve"></form></body></html>`,
  );
  siteOrigin = site.origin;
}, 90_000);

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

afterAll(async () => {
  await site?.close();
});

async function setUp(model: Model = new DemoModel()) {
  const store = new MemoryStore();
  const runtime = createRuntime({ model, store });
  const server = await startServe({ runtime, store, port: 0, log: () => {}, token: TOKEN, linkSecret: SECRET });
  cleanups.push(() => server.close());
  const page = await workerPages().take();
  cleanups.push(() => workerPages().release(page));
  // Any style or script the page's policy blocks would be reported here.
  const blocked: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) blocked.push(message.text());
  });
  return { http: client(server.url, TOKEN), page, blocked };
}

type Http = ReturnType<typeof client>;

async function waitingIn(http: Http, id: string, reason: string): Promise<SessionView> {
  let view: SessionView | undefined;
  await expect
    .poll(
      async () => {
        view = (await http.get(`/sessions/${id}`)).body.view;
        return view!.waitingReason ?? view!.state;
      },
      { timeout: 20_000 },
    )
    .toBe(reason);
  return view!;
}

/** A session of the tiny package at its step's approval. */
async function atApproval(http: Http): Promise<SessionView> {
  const id: string = (await http.post('/sessions', { packageId: 'tiny' })).body.view.id;
  await http.post(`/sessions/${id}/events`, { type: 'user_submitted_input', text: 'A note on lighthouses.' });
  return waitingIn(http, id, 'approve_step');
}

/** The same session a step further: its artifact waits for review. */
async function atReview(http: Http): Promise<SessionView> {
  const view = await atApproval(http);
  await http.post(`/sessions/${view.id}/events`, { type: 'user_approved_next_step' });
  return waitingIn(http, view.id, 'review_artifact');
}

async function linkFor(http: Http, view: SessionView, recipient: string): Promise<{ url: string; linkId: string }> {
  const made = await http.post(`/sessions/${view.id}/links`, { recipient, wait: view.wait });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  return made.body;
}

async function journalled(http: Http, id: string, type: string): Promise<Record<string, unknown>[]> {
  const entries = (await http.get(`/sessions/${id}/journal?limit=1000`)).body.entries as { type: string; payload: Record<string, unknown> }[];
  return entries.filter((e) => e.type === type).map((e) => e.payload);
}

async function decide(page: Page, button: string): Promise<string> {
  await page.getByRole('button', { name: button }).click();
  await page.getByRole('heading', { name: 'Thank you' }).waitFor();
  return page.locator('body').innerText();
}

describe.skipIf(skip)('a decision link opened in a browser', () => {
  it('shows the step and its reason; Approve moves the session, as the recipient via the link; the link then says so and offers nothing', async () => {
    const { http, page, blocked } = await setUp();
    const view = await atApproval(http);
    const { url, linkId } = await linkFor(http, view, 'alice');
    await page.goto(url);
    expect(await page.locator('h1').innerText()).toBe('A step waits for your approval');
    const shown = await page.locator('body').innerText();
    expect(shown).toContain(view.pendingStep!.reason);
    expect(shown).toContain('For alice');
    // The inline style is allowed by its hash: applied, and nothing was blocked.
    expect(await page.evaluate(() => getComputedStyle(document.body).maxWidth)).toBe('736px');

    expect(await decide(page, 'Approve')).toContain('You approved the step');
    const moved = await waitingIn(http, view.id, 'review_artifact');
    expect(moved.wait).toBeGreaterThan(view.wait!);
    expect(await journalled(http, view.id, 'user_approved_next_step')).toEqual([
      expect.objectContaining({ by: 'alice', via: `link:${linkId}`, wait: view.wait }),
    ]);

    await page.goto(url);
    expect(await page.locator('h1').innerText()).toBe('Nothing to decide');
    expect(await page.locator('form').count()).toBe(0);
    expect(blocked).toEqual([]);
  });

  it('rejects the step with the reason typed on the page', async () => {
    const { http, page } = await setUp();
    const view = await atApproval(http);
    const { url, linkId } = await linkFor(http, view, 'bob');
    await page.goto(url);
    await page.locator('textarea[name="reason"]').fill('Ask the outliner first.');
    expect(await decide(page, 'Reject')).toContain('You rejected it');
    await expect.poll(async () => (await http.get(`/sessions/${view.id}`)).body.view.wait, { timeout: 20_000 }).not.toBe(view.wait);
    expect(await journalled(http, view.id, 'user_rejected_next_step')).toEqual([
      expect.objectContaining({ reason: 'Ask the outliner first.', by: 'bob', via: `link:${linkId}` }),
    ]);
  });

  it('shows the artifact and accepts it; another link rejects an artifact with a reason', async () => {
    const { http, page, blocked } = await setUp();
    const view = await atReview(http);
    const { url } = await linkFor(http, view, 'carol');
    await page.goto(url);
    expect(await page.locator('h1').innerText()).toBe('A result waits for your review');
    const shown = await page.locator('body').innerText();
    for (const tag of view.artifact!.tags) expect(shown).toContain(tag.body.trim().split('\n')[0]);
    expect(await decide(page, 'Accept')).toContain('You accepted the result');
    await expect
      .poll(async () => ((await http.get(`/sessions/${view.id}`)).body.view as SessionView).artifacts.find((a) => a.id === view.artifact!.id)?.status, {
        timeout: 20_000,
      })
      .toBe('accepted');
    expect(await journalled(http, view.id, 'user_accepted_artifact')).toEqual([
      expect.objectContaining({ artifactId: view.artifact!.id, by: 'carol', via: expect.stringMatching(/^link:/) }),
    ]);

    const other = await atReview(http);
    await page.goto((await linkFor(http, other, 'dan')).url);
    await page.locator('textarea[name="reason"]').fill('Shorter, please.');
    expect(await decide(page, 'Reject')).toContain('You rejected it');
    await waitingIn(http, other.id, 'revision');
    expect(await journalled(http, other.id, 'user_rejected_artifact')).toEqual([
      expect.objectContaining({ artifactId: other.artifact!.id, reason: 'Shorter, please.', by: 'dan' }),
    ]);
    expect(blocked).toEqual([]);
  });

  it("answers the team's questions", async () => {
    const model = new ScriptedModel([
      { agent: 'manager', toolCalls: [scriptedCall('ask_user', { message: 'Before I start:', questions: ['Which coast?', 'How long?'] })] },
      { agent: 'manager', toolCalls: [scriptedCall('ask_user', { message: 'Thanks.' })] },
    ]);
    const { http, page } = await setUp(model);
    const id: string = (await http.post('/sessions', { packageId: 'tiny' })).body.view.id;
    await http.post(`/sessions/${id}/events`, { type: 'user_submitted_input', text: 'A ghost story.' });
    const view = await waitingIn(http, id, 'intake'); // the manager clarifies the request
    expect(view.questions?.map((q) => q.text)).toEqual(['Which coast?', 'How long?']);
    const { url } = await linkFor(http, view, 'erin');
    await page.goto(url);
    expect(await page.locator('body').innerText()).toContain('Before I start:');
    await page.getByLabel('Which coast?').fill('The Norwegian coast.');
    await page.getByLabel('How long?').fill('Two pages.');
    expect(await decide(page, 'Send answers')).toContain('Your answers were sent');
    await expect.poll(async () => (await http.get(`/sessions/${id}`)).body.view.wait, { timeout: 20_000 }).not.toBe(view.wait);
    expect(await journalled(http, id, 'user_answered_questions')).toEqual([
      expect.objectContaining({ answers: { q1: 'The Norwegian coast.', q2: 'Two pages.' }, by: 'erin' }),
    ]);
  });

  it("refuses the link's decision from a form on another site's page", async () => {
    const { http, page } = await setUp();
    const view = await atApproval(http);
    forgedTarget = (await linkFor(http, view, 'alice')).url;
    await page.goto(`${siteOrigin}/`);
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.url() === forgedTarget),
      page.evaluate(() => (document.getElementById('f') as HTMLFormElement).submit()),
    ]);
    expect(answer.status()).toBe(403);
    const after = (await http.get(`/sessions/${view.id}`)).body.view as SessionView;
    expect({ state: after.state, wait: after.wait }).toEqual({ state: 'waiting_user.approve_step', wait: view.wait });
  });
});
