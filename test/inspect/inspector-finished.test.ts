/**
 * The inspector page of a finished session at a laptop's size (1280×800) in Chromium: it
 * opens on the whole statechart — its final state alone would leave the chart pane nearly
 * empty — with the final state marked; "find active" zooms in to a readable size and "fit"
 * shows the whole chart again. Saves a screenshot to test-results/inspector-finished-1280x800.png.
 *
 * Skipped — with a message — only when /usr/bin/chromium is missing outside CI.
 */
import { mkdirSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime, MemoryStore } from '../../src/index.js';
import { DemoModel } from '../../src/testing.js';
import { startInspector, type InspectorHandle } from '../../src/inspect/server.js';
import { MIN_TEXT_PX } from '../../src/inspect/page/diagram-viewport.js';
import { buildPage } from './page-build.js';
import { chromiumMissing, runLayoutsDir } from '../support/chromium.js';
import { workerPages } from '../support/kept-pages.js';

const skip = chromiumMissing('inspector finished');

let inspector: InspectorHandle;
let page: Page;

beforeAll(async () => {
  if (skip) return;
  const pageDir = await buildPage();
  const store = new MemoryStore();
  const runtime = createRuntime({ model: new DemoModel(), store });
  const session = await runtime.createSession({ packageId: 'short-story' });
  await session.send({ type: 'user_submitted_input', text: 'A story about a lighthouse keeper.' });
  for (let sends = 0; session.view().phase !== 'done'; sends++) {
    expect(sends).toBeLessThan(20);
    const view = session.view();
    if (view.waitingReason === 'approve_step') await session.send({ type: 'user_approved_next_step' });
    else if (view.waitingReason === 'review_artifact') await session.send({ type: 'user_accepted_artifact', artifactId: view.artifact!.id });
    else throw new Error(`unexpected wait: ${view.state}`);
  }
  inspector = await startInspector({ runtime, store, port: 0, layoutsDir: runLayoutsDir(), pageDir, log: () => {}, sessionId: session.id });
  await workerPages().ready();
  page = await workerPages().take({ width: 1280, height: 800 });
  page.on('pageerror', (error) => console.error('[page error]', error));
  await page.goto(inspector.url);
  await page.waitForSelector('body[data-diagram="ready"]');
  await page.waitForSelector('#diagram-svg[data-active="done"] .state.active-leaf[data-path="done"]');
}, 120_000);

afterAll(async () => {
  if (page) await workerPages().release(page);
  await inspector?.close();
});

interface Box {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

/** The drawing, the chart pane's box, the final state's box, the scale and the smallest text on screen. */
function look(): Promise<{ svg: Box; pane: Box; room: number; done: Box; scale: number; smallestTextPx: number; scrolls: boolean }> {
  return page.evaluate(() => {
    const svg = document.querySelector<SVGSVGElement>('#diagram-svg')!;
    const scroller = document.querySelector<HTMLElement>('.diagram-scroll')!;
    const box = (r: DOMRect) => ({ left: r.left, top: r.top, right: r.right, bottom: r.bottom });
    const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    return {
      svg: box(svg.getBoundingClientRect()),
      pane: box(scroller.getBoundingClientRect()),
      // The pane shrinks to a small drawing: what it may grow to is its width by its max-height.
      room: scroller.getBoundingClientRect().width * parseFloat(getComputedStyle(scroller).maxHeight),
      done: box(svg.querySelector('.state.active-leaf > rect')!.getBoundingClientRect()),
      scale,
      smallestTextPx: Math.min(...[...svg.querySelectorAll('text')].map((t) => parseFloat(getComputedStyle(t).fontSize) * scale)),
      scrolls: scroller.scrollWidth > scroller.clientWidth || scroller.scrollHeight > scroller.clientHeight,
    };
  });
}

const area = (b: Box) => (b.right - b.left) * (b.bottom - b.top);

function expectWhole(seen: Awaited<ReturnType<typeof look>>): void {
  const where = JSON.stringify(seen);
  // Wholly inside the pane, nothing to scroll to…
  expect(seen.svg.left, where).toBeGreaterThanOrEqual(seen.pane.left - 0.5);
  expect(seen.svg.top, where).toBeGreaterThanOrEqual(seen.pane.top - 0.5);
  expect(seen.svg.right, where).toBeLessThanOrEqual(seen.pane.right + 0.5);
  expect(seen.svg.bottom, where).toBeLessThanOrEqual(seen.pane.bottom + 0.5);
  expect(seen.scrolls, where).toBe(false);
  // …and filling most of the room it has, the final state among what it shows.
  expect(area(seen.svg) / seen.room, where).toBeGreaterThan(0.6);
  expect(seen.done.left, where).toBeGreaterThanOrEqual(seen.pane.left);
  expect(seen.done.bottom, where).toBeLessThanOrEqual(seen.pane.bottom);
}

describe.skipIf(skip)('the inspector of a finished session at 1280×800', () => {
  let whole: Awaited<ReturnType<typeof look>>;

  it('opens on the whole chart, its final state marked', async () => {
    whole = await look();
    console.log(`finished session: the chart at scale ${whole.scale.toFixed(2)}, ${JSON.stringify(whole.svg)} in ${JSON.stringify(whole.pane)}`);
    expectWhole(whole);
    mkdirSync('test-results', { recursive: true });
    await page.screenshot({ path: 'test-results/inspector-finished-1280x800.png' });
  });

  it('"find active" zooms in to a readable size; "fit" shows the whole chart again', async () => {
    await page.click('.diagram-tools button:text-is("find active")');
    const zoomed = await look();
    expect(zoomed.scale).toBeGreaterThan(whole.scale * 2);
    expect(zoomed.smallestTextPx).toBeGreaterThanOrEqual(MIN_TEXT_PX - 0.01);
    await page.click('.diagram-tools button:text-is("fit")');
    const fitted = await look();
    expectWhole(fitted);
    expect(fitted.scale).toBeCloseTo(whole.scale, 5);
  });
});
