/**
 * Browser pages kept from one test to the next instead of a new one for each. Opening a page
 * starts new renderer processes and sets up a tab in the browser and Playwright's scripts in it
 * again; navigating a kept page to the next test's server reuses all of that and costs a
 * fraction of it (bench/README.md). The browser tests open dozens of pages in a run.
 *
 * What a test gets from `take()`: a page at about:blank, in a context of its own (one per page,
 * so clearing one page's cookies never touches a page another test holds), with the viewport it
 * asked for, no cookies, no permissions granted, no routes and no listeners of an earlier test.
 * Each test's server listens on a port of its own, so nothing an earlier page stored for its
 * origin is there for the next (no page of Steward keeps web storage anyway). A page that
 * cannot be made so (closed, crashed, stuck) is closed and dropped, never handed out again. A
 * test that needs what cannot be undone on a page (`exposeFunction`, `addInitScript`, context
 * options) opens its own.
 */
import type { Browser, Page, ViewportSize } from 'playwright-core';
import { openChromium } from './chromium.js';

/** Playwright's viewport for a page opened without one. */
const DEFAULT_VIEWPORT: ViewportSize = { width: 1280, height: 720 };

/** How long a page may take to leave the last test's document before it is dropped instead. */
const RESET_TIMEOUT_MS = 10_000;

export class KeptPages {
  readonly #idle: Page[] = [];
  #browser: Promise<Browser> | undefined;

  /** Pages of the browser `open` gives (called once, when the first page is taken). */
  constructor(private readonly open: () => Promise<Browser>) {}

  /**
   * The browser, opened if it is not yet: for a test file's `beforeAll` with a long time limit,
   * since the first caller of the run may wait for Chromium to start.
   */
  async ready(): Promise<Browser> {
    this.#browser ??= this.open();
    return this.#browser;
  }

  /** A page for the caller alone until it `release()`s it: a kept one when there is one, else a new one. */
  async take(viewport: ViewportSize = DEFAULT_VIEWPORT): Promise<Page> {
    const page = this.#idle.pop() ?? (await (await (await this.ready()).newContext()).newPage());
    await page.setViewportSize(viewport);
    return page;
  }

  /** Hands `page` back, reset for the next taker; a page that cannot be reset is closed instead. */
  async release(page: Page): Promise<void> {
    if (page.isClosed()) return;
    try {
      await reset(page);
      this.#idle.push(page);
    } catch {
      await page
        .context()
        .close()
        .catch(() => {});
    }
  }

  /** Closes the kept pages and what `open` gave: a browser of its own closes, a connection to the run's browser ends. */
  async close(): Promise<void> {
    const pages = this.#idle.splice(0);
    await Promise.all(
      pages.map((page) =>
        page
          .context()
          .close()
          .catch(() => {}),
      ),
    );
    await (await this.#browser)?.close();
  }
}

/** Undoes what a test did to a page: its listeners and routes, its document, its cookies and permissions. */
async function reset(page: Page): Promise<void> {
  await page.removeAllListeners(undefined, { behavior: 'ignoreErrors' });
  await page.unrouteAll({ behavior: 'ignoreErrors' });
  // The one step a page can hang in (a dialog, an unload handler): the others only tell the browser.
  await page.goto('about:blank', { timeout: RESET_TIMEOUT_MS });
  await page.context().clearCookies();
  await page.context().clearPermissions();
}

let workers: KeptPages | undefined;

/**
 * The worker's kept pages, on the run's Chromium (`openChromium`): shared by the test files
 * this worker runs one after another, so a file's first page is usually one an earlier file
 * left. The connection and the pages end with the worker.
 */
export function workerPages(): KeptPages {
  workers ??= new KeptPages(openChromium);
  return workers;
}
