/**
 * Kept pages (test/support/kept-pages.ts): a page handed back is handed out again, with nothing
 * of the test that had it: not its document, cookies, routes, listeners or viewport; a page that
 * was closed is never handed out again; two takers at once get two pages.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumMissing, openChromium } from '../support/chromium.js';
import { KeptPages } from '../support/kept-pages.js';
import { startOtherSite } from '../support/other-site.js';

const skip = chromiumMissing('kept pages');

describe.skipIf(skip)('kept pages', () => {
  const pages = new KeptPages(openChromium);
  let site: Awaited<ReturnType<typeof startOtherSite>>;

  beforeAll(async () => {
    await pages.ready();
    site = await startOtherSite(() => '<!doctype html><title>site</title><p id="from">the server</p>');
  }, 90_000);

  afterAll(async () => {
    await pages.close();
    await site?.close();
  });

  it('hands a released page out again, reset: about:blank, no cookies, routes, listeners, and the asked viewport', async () => {
    const first = await pages.take({ width: 900, height: 700 });
    const heard: string[] = [];
    first.on('console', (message) => heard.push(message.text()));
    await first.route(`${site.origin}/routed`, (route) => route.fulfill({ status: 200, contentType: 'text/html', body: '<p id="from">the route</p>' }));
    await first.goto(`${site.origin}/routed`);
    expect(await first.textContent('#from')).toBe('the route');
    await first.context().addCookies([{ name: 'left', value: 'behind', url: site.origin }]);
    await first.evaluate(() => console.log('first test'));
    expect(heard).toEqual(['first test']);
    await pages.release(first);

    const again = await pages.take();
    expect(again).toBe(first);
    expect(again.url()).toBe('about:blank');
    expect(again.viewportSize()).toEqual({ width: 1280, height: 720 });
    expect(await again.context().cookies()).toEqual([]);
    await again.goto(`${site.origin}/routed`);
    expect(await again.textContent('#from')).toBe('the server');
    await again.evaluate(() => console.log('second test'));
    expect(heard).toEqual(['first test']);
    await pages.release(again);
  }, 60_000);

  it('never hands out a page that was closed, and gives two takers at once two pages', async () => {
    const closed = await pages.take();
    await closed.close();
    await pages.release(closed);
    const [a, b] = [await pages.take(), await pages.take()];
    expect(a).not.toBe(closed);
    expect(b).not.toBe(closed);
    expect(a).not.toBe(b);
    expect(a.context()).not.toBe(b.context());
    await pages.release(a);
    await pages.release(b);
  }, 60_000);
});
