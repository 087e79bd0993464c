/**
 * A web page in a real browser (playwright-core driving Debian's chromium) against
 * `steward serve` and the inspector on 127.0.0.1, as an attacker would try it:
 * - from another origin (a page served by another port of 127.0.0.1): a `no-cors` POST with
 *   a text/plain body (a "simple request", no CORS preflight) and CORS-mode reads and writes;
 * - by DNS rebinding: chromium maps rebind.example to 127.0.0.1, so a page at
 *   http://rebind.example:PORT is same-origin with the server and could read its answers.
 *   The document itself is the attacker's (page.route fulfils only it); its fetches reach
 *   the real server.
 * Neither reads anything nor creates a session: the store says so afterwards.
 * Skipped — with a message — only when /usr/bin/chromium is missing outside CI.
 */
import { startOtherSite } from '../support/other-site.js';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime, MemoryStore } from '../../src/index.js';
import { DemoModel } from '../../src/testing.js';
import { startInspector } from '../../src/inspect/server.js';
import { startServe } from '../../src/serve/server.js';
import { buildPage } from '../inspect/page-build.js';
import { chromiumMissing, launchChromium, runLayoutsDir } from '../support/chromium.js';
import { KeptPages } from '../support/kept-pages.js';

const skip = chromiumMissing('browser guards');

const ATTACKER_HTML = '<!doctype html><html><head><title>attacker</title></head><body>a page of another site</body></html>';
const createBody = JSON.stringify({ packageId: 'tiny' });

/** Pages of this file's own browser (its flags are not the run's), kept from one test to the next. */
let pages: KeptPages;
let attacker: { origin: string; close: () => Promise<void> } | undefined;
let attackerOrigin = '';
const cleanups: (() => Promise<unknown> | void)[] = [];

beforeAll(async () => {
  if (skip) return;
  pages = new KeptPages(() =>
    launchChromium([
      // Only rebind.example resolves (to 127.0.0.1); every other name fails: nothing reaches the internet.
      '--host-resolver-rules=MAP rebind.example 127.0.0.1, MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
      // Chromium's own Private Network Access check would stop the rebound page before the
      // server sees it; other browsers have none, so the server must refuse by itself: off.
      '--disable-features=LocalNetworkAccessChecks,PrivateNetworkAccessRespectPreflightResults,BlockInsecurePrivateNetworkRequests',
    ]),
  );
  await pages.ready();
  attacker = await startOtherSite(() => ATTACKER_HTML);
  attackerOrigin = attacker.origin;
}, 90_000);

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

afterAll(async () => {
  await pages?.close();
  await attacker?.close();
});

async function newPage(): Promise<Page> {
  const page = await pages.take();
  cleanups.push(() => pages.release(page));
  return page;
}

/** A page whose origin is http://rebind.example:port, its document the attacker's. */
async function rebindingPage(port: number): Promise<Page> {
  const page = await newPage();
  const origin = `http://rebind.example:${port}`;
  await page.route(`${origin}/`, (route) => route.fulfill({ status: 200, contentType: 'text/html', body: ATTACKER_HTML }));
  await page.goto(`${origin}/`);
  expect(await page.evaluate(() => location.origin)).toBe(origin);
  return page;
}

/** In the page: each request's status, or "failed" when the browser keeps the answer from the page. */
function attempts(page: Page, requests: Array<{ url: string; init?: RequestInit }>): Promise<Array<number | 'failed'>> {
  return page.evaluate(async (list) => {
    const out: Array<number | 'failed'> = [];
    for (const { url, init } of list) {
      try {
        const res = await fetch(url, init);
        out.push(res.type === 'opaque' ? 0 : res.status);
      } catch {
        out.push('failed');
      }
    }
    return out;
  }, requests);
}

async function serveOn() {
  const store = new MemoryStore();
  const runtime = createRuntime({ model: new DemoModel(), store });
  const server = await startServe({ runtime, store, port: 0, log: () => {} });
  cleanups.push(() => server.close());
  return { store, server };
}

async function inspectorOn() {
  const store = new MemoryStore();
  const runtime = createRuntime({ model: new DemoModel(), store });
  const inspector = await startInspector({ runtime, store, port: 0, layoutsDir: runLayoutsDir(), pageDir: await buildPage(), log: () => {} });
  cleanups.push(() => inspector.close());
  return { store, inspector, port: Number(new URL(inspector.url).port) };
}

describe.skipIf(skip)('a web page against steward serve', () => {
  it('from another origin: a no-cors text/plain POST creates nothing, CORS reads and writes fail', async () => {
    const { store, server } = await serveOn();
    const page = await newPage();
    await page.goto(`${attackerOrigin}/`);
    const results = await attempts(page, [
      { url: `${server.url}/sessions`, init: { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body: createBody } },
      { url: `${server.url}/sessions`, init: { method: 'POST', mode: 'no-cors', body: createBody } },
      { url: `${server.url}/sessions` },
      { url: `${server.url}/sessions`, init: { method: 'POST', headers: { 'content-type': 'application/json' }, body: createBody } },
    ]);
    expect(results).toEqual([0, 0, 'failed', 'failed']);
    expect((await store.list()).sessions).toEqual([]);
    const listed = (await (await fetch(`${server.url}/sessions`)).json()) as { sessions: unknown[] };
    expect(listed.sessions).toEqual([]);
  });

  it('by DNS rebinding (a same-origin page under another name): reads and writes get 403', async () => {
    const { store, server } = await serveOn();
    // A session the attacker would like to read.
    await fetch(`${server.url}/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: createBody });
    const page = await rebindingPage(server.port);
    const results = await attempts(page, [
      { url: '/sessions' },
      { url: '/healthz' },
      { url: '/sessions', init: { method: 'POST', headers: { 'content-type': 'application/json' }, body: createBody } },
      { url: '/sessions', init: { method: 'POST', headers: { 'content-type': 'text/plain' }, body: createBody } },
    ]);
    expect(results).toEqual([403, 403, 403, 403]);
    expect((await store.list()).sessions).toHaveLength(1);
  });
});

describe.skipIf(skip)('a web page against the inspector (its token leaked, even)', () => {
  it('from another origin: a no-cors text/plain POST with the token in the URL creates nothing', async () => {
    const { store, inspector, port } = await inspectorOn();
    const page = await newPage();
    await page.goto(`${attackerOrigin}/`);
    const api = `http://127.0.0.1:${port}/api/sessions?token=${inspector.token}`;
    const results = await attempts(page, [
      { url: api, init: { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body: createBody } },
      { url: api },
    ]);
    expect(results).toEqual([0, 'failed']);
    expect((await store.list()).sessions).toEqual([]);
  });

  it('by DNS rebinding: reads and writes get 403', async () => {
    const { store, inspector, port } = await inspectorOn();
    const page = await rebindingPage(port);
    const headers = { 'x-steward-token': inspector.token };
    const results = await attempts(page, [
      { url: '/api/sessions', init: { headers } },
      { url: '/api/sessions', init: { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: createBody } },
    ]);
    expect(results).toEqual([403, 403]);
    expect((await store.list()).sessions).toEqual([]);
  });

  it('its own page still works: the inspector opens and lists a session it creates', async () => {
    const { store, inspector } = await inspectorOn();
    const page = await newPage();
    await page.goto(inspector.url);
    const results = await attempts(page, [
      { url: '/api/sessions', init: { method: 'POST', headers: { 'x-steward-token': inspector.token, 'content-type': 'application/json' }, body: createBody } },
      { url: '/api/sessions', init: { headers: { 'x-steward-token': inspector.token } } },
    ]);
    expect(results).toEqual([201, 200]);
    expect((await store.list()).sessions).toHaveLength(1);
  });
});
