/**
 * The inspector page at a laptop's size (1280×800) in Chromium: a live session's statechart
 * opens readable with the active state on screen, and stays so after "find active" (which
 * zooms in) and after each step the session takes; "fit" shows the whole chart, the active
 * state in it (a finished session's page: inspector-finished.test.ts); the journal's "Fork from here" is one
 * line; the step's heading says "Pending step" only while it waits for approval.
 * Saves a screenshot to test-results/inspector-1280x800.png.
 *
 * Skipped — with a message — only when /usr/bin/chromium is missing outside CI.
 */
import { mkdirSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime, MemoryStore, type Session } from '../../src/index.js';
import { DemoModel } from '../../src/testing.js';
import { startInspector, type InspectorHandle } from '../../src/inspect/server.js';
import { MIN_TEXT_PX } from '../../src/inspect/page/diagram-viewport.js';
import { buildPage } from './page-build.js';
import { chromiumMissing, runLayoutsDir } from '../support/chromium.js';
import { workerPages } from '../support/kept-pages.js';

const skip = chromiumMissing('inspector viewport');

const VIEWPORT = { width: 1280, height: 800 };

let inspector: InspectorHandle;
let session: Session;
let page: Page;

beforeAll(async () => {
  if (skip) return;
  const pageDir = await buildPage();
  const store = new MemoryStore();
  const runtime = createRuntime({ model: new DemoModel(), store });
  session = await runtime.createSession({ packageId: 'tiny' });
  inspector = await startInspector({ runtime, store, port: 0, layoutsDir: runLayoutsDir(), pageDir, log: () => {}, sessionId: session.id });
  await workerPages().ready();
  page = await workerPages().take(VIEWPORT);
  page.on('pageerror', (error) => console.error('[page error]', error));
  await page.goto(inspector.url);
  await page.waitForSelector('body[data-diagram="ready"]');
  await page.waitForSelector('#diagram-svg .state.active-leaf[data-path="waiting_user.intake"]');
}, 120_000);

afterAll(async () => {
  if (page) await workerPages().release(page);
  await inspector?.close();
});

interface Seen {
  state: string;
  scale: number;
  /** The smallest rendered text: computed font-size × scale, and the smallest text box height. */
  smallestTextPx: number;
  smallestTextBoxPx: number;
  leaf: { left: number; top: number; right: number; bottom: number };
  visible: { left: number; top: number; right: number; bottom: number };
}

/** What the page shows now: the drawing's scale, its smallest text, the active leaf's box and the visible part of the chart. */
function look(): Promise<Seen> {
  return page.evaluate(() => {
    const svg = document.querySelector<SVGSVGElement>('#diagram-svg')!;
    const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    const texts = [...svg.querySelectorAll<SVGTextElement>('text')];
    const rect = (r: DOMRect) => ({ left: r.left, top: r.top, right: r.right, bottom: r.bottom });
    const scroller = document.querySelector('.diagram-scroll')!.getBoundingClientRect();
    return {
      state: svg.dataset.active ?? '',
      scale,
      smallestTextPx: Math.min(...texts.map((t) => parseFloat(getComputedStyle(t).fontSize) * scale)),
      smallestTextBoxPx: Math.min(...texts.map((t) => t.getBoundingClientRect().height).filter((px) => px > 0)),
      leaf: rect(svg.querySelector('.state.active-leaf > rect')!.getBoundingClientRect()),
      visible: {
        left: Math.max(0, scroller.left),
        top: Math.max(0, scroller.top),
        right: Math.min(window.innerWidth, scroller.right),
        bottom: Math.min(window.innerHeight, scroller.bottom),
      },
    };
  });
}

/** The active state wholly on screen, at a readable size (a chart shrunk to 4 px text shows everything and helps nobody). */
function expectActiveInView(seen: Seen): void {
  const { leaf, visible } = seen;
  const where = `${seen.state} at ${JSON.stringify(leaf)} in ${JSON.stringify(visible)}`;
  expect(seen.smallestTextPx, where).toBeGreaterThanOrEqual(MIN_TEXT_PX - 0.01);
  expect(leaf.left, where).toBeGreaterThanOrEqual(visible.left);
  expect(leaf.top, where).toBeGreaterThanOrEqual(visible.top);
  expect(leaf.right, where).toBeLessThanOrEqual(visible.right);
  expect(leaf.bottom, where).toBeLessThanOrEqual(visible.bottom);
}

const waitForActive = (path: string) => page.waitForSelector(`#diagram-svg .state.active-leaf[data-path="${path}"]`, { timeout: 30_000 });

describe.skipIf(skip)('the inspector at 1280×800', { timeout: 60_000 }, () => {
  let opened: Seen;
  let whole: Seen;

  it('opens with every label at least 10 px high and the active state in view', async () => {
    opened = await look();
    console.log(
      `on opening: scale ${opened.scale.toFixed(2)}, smallest text ${opened.smallestTextPx.toFixed(1)} px (box ${opened.smallestTextBoxPx.toFixed(1)} px)`,
    );
    expect(opened.smallestTextPx).toBeGreaterThanOrEqual(MIN_TEXT_PX - 0.01);
    expect(MIN_TEXT_PX).toBe(10);
    expectActiveInView(opened);
  });

  it('"fit" shows the whole chart, the active state in it', async () => {
    await page.click('.diagram-tools button:text-is("fit")');
    const seen = await look();
    expect(seen.scale).toBeLessThan(opened.scale / 2);
    whole = seen;
    const svg = await page.evaluate(() => document.querySelector('#diagram-svg')!.getBoundingClientRect().toJSON() as DOMRect);
    expect(svg.left).toBeGreaterThanOrEqual(seen.visible.left - 0.5);
    expect(svg.right).toBeLessThanOrEqual(seen.visible.right + 0.5);
    expect(seen.leaf.top).toBeGreaterThanOrEqual(seen.visible.top);
    expect(seen.leaf.bottom).toBeLessThanOrEqual(seen.visible.bottom);
  });

  it('"find active" zooms in on the active state from there, which stays in view', async () => {
    await page.click('.diagram-tools button:text-is("find active")');
    const seen = await look();
    console.log(`after find active: scale ${seen.scale.toFixed(2)}, smallest text ${seen.smallestTextPx.toFixed(1)} px`);
    expect(seen.scale).toBeGreaterThan(whole.scale * 1.2);
    expect(seen.smallestTextPx).toBeGreaterThanOrEqual(MIN_TEXT_PX - 0.01);
    expectActiveInView(seen);
  });

  it('each step keeps the new active state in view', async () => {
    await session.send({ type: 'user_submitted_input', text: 'A note about green tea.' });
    await waitForActive('waiting_user.approve_step');
    expectActiveInView(await look());
    await session.send({ type: 'user_approved_next_step' });
    await waitForActive('waiting_user.review_artifact');
    expectActiveInView(await look());
  });

  it('the step is "Pending step" only while it waits for approval', async () => {
    expect(session.view().state).toBe('waiting_user.review_artifact');
    await expect.poll(() => page.getAttribute('#pending-step', 'data-heading')).toBe('Step that wrote the artifact');
    expect(await page.textContent('#details')).not.toContain('Pending step');
    expect(await page.textContent('#pending-step')).toContain('approved');
    await page.click('#timeline li[data-seq="4"] button'); // back to the approval, by time travel
    await expect.poll(() => page.getAttribute('#pending-step', 'data-heading')).toBe('Pending step');
    expect(await page.textContent('#pending-step')).toContain('required');
    await page.click('#back-to-live');
  });

  it('a far jump keeps it in view too: to done, and back to the first entry by time travel', async () => {
    await session.send({ type: 'user_accepted_artifact', artifactId: session.view().artifact!.id });
    await page.waitForSelector(`#diagram-svg[data-active="${session.view().state}"]`);
    expectActiveInView(await look());
    await page.click('#timeline li[data-seq="1"] button');
    await waitForActive('waiting_user.intake');
    expectActiveInView(await look());
  });

  it('the journal shows "Fork from here" on one line', async () => {
    const lines = await page.$$eval('#timeline button.fork', (buttons) =>
      buttons.map((button) => {
        const range = document.createRange();
        range.selectNodeContents(button);
        return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
      }),
    );
    expect(lines.length).toBeGreaterThan(2);
    expect(new Set(lines)).toEqual(new Set([1]));
    mkdirSync('test-results', { recursive: true });
    await page.screenshot({ path: 'test-results/inspector-1280x800.png' });
  });
});
