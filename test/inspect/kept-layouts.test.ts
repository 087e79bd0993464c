/**
 * The laid-out charts an inspector keeps (layoutsDir): the API that keeps and hands them out
 * (keys and bodies checked, a bad file dropped, the oldest pruned), and a page that draws a
 * chart another inspector laid out without loading ELK, the same drawing.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime, MemoryStore } from '../../src/index.js';
import { DemoModel } from '../../src/testing.js';
import { KeptLayouts } from '../../src/inspect/kept-layouts.js';
import type { Placement } from '../../src/inspect/placement.js';
import { startInspector, type InspectorHandle } from '../../src/inspect/server.js';
import { chromiumMissing } from '../support/chromium.js';
import { workerPages } from '../support/kept-pages.js';
import { until } from '../support/cli-process.js';
import { buildPage } from './page-build.js';

const skipBrowser = chromiumMissing('kept layouts');
const KEY = 'a'.repeat(64);
const placement: Placement = {
  width: 200,
  height: 120,
  boxes: [{ id: 'session', x: 8, y: 8, width: 184, height: 104 }],
  edges: [
    {
      id: 'e1',
      source: 'a',
      target: 'b',
      points: [
        { x: 10, y: 10 },
        { x: 10, y: 40 },
      ],
      label: { text: 'go', x: 12, y: 20, width: 20, height: 16 },
    },
  ],
};

let pageDir = '';
const dirs: string[] = [];
const open: InspectorHandle[] = [];
beforeAll(async () => {
  pageDir = await buildPage();
}, 60_000);
afterEach(async () => {
  while (open.length) await open.pop()!.close();
});
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'steward-layouts-'));
  dirs.push(dir);
  return join(dir, 'kept');
}

async function inspectorWith(layoutsDir: string | undefined) {
  const store = new MemoryStore();
  const runtime = createRuntime({ model: new DemoModel(), store });
  const session = await runtime.createSession({ packageId: 'tiny' });
  const inspector = await startInspector({ runtime, store, port: 0, pageDir, log: () => {}, sessionId: session.id, ...(layoutsDir ? { layoutsDir } : {}) });
  open.push(inspector);
  const base = new URL(inspector.url).origin;
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}/api${path}`, {
      method,
      headers: { 'x-steward-token': inspector.token, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };
  return { inspector, api };
}

describe('the kept layouts API', () => {
  it('keeps a placement under its key and hands it back; null for a key it does not have', async () => {
    const dir = freshDir();
    const { api } = await inspectorWith(dir);
    expect((await api('GET', '/info')).body.keepsLayouts).toBe(true);
    expect(await api('GET', `/layouts/${KEY}`)).toEqual({ status: 200, body: { placement: null } });
    expect(await api('PUT', `/layouts/${KEY}`, placement)).toEqual({ status: 200, body: { kept: true } });
    expect(await api('GET', `/layouts/${KEY}`)).toEqual({ status: 200, body: { placement } });
    expect(readdirSync(dir)).toEqual([`${KEY}.json`]);
  });

  it('refuses a key that is not 64 hex digits and a body that is not a placement, keeping nothing; drops unknown fields', async () => {
    const dir = freshDir();
    const { api } = await inspectorWith(dir);
    for (const key of ['A'.repeat(64), 'a'.repeat(63), '..%2F..%2Fetc%2Fpasswd']) {
      const res = await api('PUT', `/layouts/${key}`, placement);
      expect(res.status, key).toBe(400);
      expect(res.body.error.message).toContain('64 lowercase hex digits');
    }
    const notFinite = { ...placement, boxes: [{ ...placement.boxes[0], x: 'left' }] };
    const tooMany = { ...placement, boxes: Array.from({ length: 5_001 }, (_, i) => ({ id: `s${i}`, x: 0, y: 0, width: 1, height: 1 })) };
    // Own "__proto__" and "constructor" keys, as JSON.parse makes them from a request's text.
    const hostile = JSON.parse(
      JSON.stringify(placement).replace(/^\{/, '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},'),
    ) as unknown;
    for (const body of [notFinite, tooMany, { width: 1 }]) expect((await api('PUT', `/layouts/${KEY}`, body)).status).toBe(400);
    expect(existsSync(dir) ? readdirSync(dir) : []).toEqual([]);
    // Unknown fields are dropped, never kept or walked.
    expect(await api('PUT', `/layouts/${KEY}`, hostile)).toEqual({ status: 200, body: { kept: true } });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((await api('GET', `/layouts/${KEY}`)).body.placement).toEqual(placement);
  });

  it('drops a kept file that no longer reads as a placement', async () => {
    const dir = freshDir();
    const kept = new KeptLayouts(dir);
    await kept.put(KEY, placement);
    writeFileSync(join(dir, `${KEY}.json`), '{"width": 1, "boxes": [');
    expect(await kept.get(KEY)).toBeNull();
    expect(existsSync(join(dir, `${KEY}.json`))).toBe(false);
  });

  it('keeps at most maxFiles, dropping the oldest', async () => {
    const dir = freshDir();
    const kept = new KeptLayouts(dir, 3);
    const keys = ['1', '2', '3', '4', '5'].map((digit) => digit.repeat(64));
    for (const key of keys.slice(0, 3)) await kept.put(key, placement);
    // Distinct ages, oldest first, so which go is not left to the clock's resolution.
    keys.slice(0, 3).forEach((key, i) => utimesSync(join(dir, `${key}.json`), 1_000 + i, 1_000 + i));
    await kept.put(keys[3]!, placement);
    await kept.put(keys[4]!, placement);
    expect(readdirSync(dir).sort()).toEqual([keys[2], keys[3], keys[4]].map((key) => `${key}.json`));
  });

  it('says a layout was not kept when its folder cannot be written, and answers null for it', async () => {
    const file = freshDir();
    writeFileSync(file, 'a file where the folder would be');
    const { api } = await inspectorWith(join(file, 'kept'));
    expect(await api('PUT', `/layouts/${KEY}`, placement)).toEqual({ status: 200, body: { kept: false } });
    expect(await api('GET', `/layouts/${KEY}`)).toEqual({ status: 200, body: { placement: null } });
  });

  it('keeps nothing without a folder: the page is told, and a PUT says it was not kept', async () => {
    const { api } = await inspectorWith(undefined);
    expect((await api('GET', '/info')).body.keepsLayouts).toBe(false);
    expect(await api('PUT', `/layouts/${KEY}`, placement)).toEqual({ status: 200, body: { kept: false } });
    expect(await api('GET', `/layouts/${KEY}`)).toEqual({ status: 200, body: { placement: null } });
  });
});

describe.skipIf(skipBrowser)('a page on an inspector that keeps layouts', { timeout: 90_000 }, () => {
  beforeAll(async () => {
    await workerPages().ready();
  }, 90_000);

  /** The page's drawing (each state's box) and the scripts it fetched. */
  async function draw(url: string) {
    const page = await workerPages().take({ width: 1600, height: 1000 });
    try {
      const fetched: string[] = [];
      page.on('request', (request) => fetched.push(new URL(request.url()).pathname));
      await page.goto(url);
      await page.waitForSelector('#diagram-svg .state.active-leaf', { timeout: 30_000 });
      const boxes = await page.$$eval('#diagram-svg g.state > rect:first-of-type', (rects) =>
        rects.map((r) => ['x', 'y', 'width', 'height'].map((a) => r.getAttribute(a)).join(' ')),
      );
      return { boxes, fetched };
    } finally {
      await workerPages().release(page);
    }
  }

  it('lays the chart out once with ELK; a page on another inspector with the same folder draws it from the kept layout, the same, without loading ELK', async () => {
    const dir = freshDir();
    const first = await draw((await inspectorWith(dir)).inspector.url);
    expect(first.fetched.some((path) => path.includes('elk-worker'))).toBe(true);
    await until(() => existsSync(dir) && readdirSync(dir).some((name) => name.endsWith('.json')), 'the page to keep its layout');
    const second = await draw((await inspectorWith(dir)).inspector.url);
    expect(second.fetched.filter((path) => path.includes('elk-worker'))).toEqual([]);
    expect(second.boxes).toEqual(first.boxes);
    expect(first.boxes.length).toBeGreaterThan(10);
  });

  it('lays out again, and keeps anew, when what is kept under the key is for another chart', async () => {
    const dir = freshDir();
    const first = await draw((await inspectorWith(dir)).inspector.url);
    await until(() => existsSync(dir) && readdirSync(dir).some((name) => name.endsWith('.json')), 'the page to keep its layout');
    const [file] = readdirSync(dir);
    writeFileSync(join(dir, file!), JSON.stringify(placement));
    const again = await draw((await inspectorWith(dir)).inspector.url);
    expect(again.fetched.some((path) => path.includes('elk-worker'))).toBe(true);
    expect(again.boxes).toEqual(first.boxes);
    await until(() => new KeptLayouts(dir).get(file!.slice(0, 64)).then((kept) => kept !== null && kept.boxes.length > 1), 'the layout kept anew');
  });
});
