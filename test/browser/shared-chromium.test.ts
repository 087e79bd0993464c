/**
 * The run's one Chromium (test/support/shared-chromium.ts) as two test files see it: one browser for both,
 * each connection with only the contexts it opened (no cookie of one in the other), and a
 * connection that closes leaves the browser to the others.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { chromiumMissing, openChromium } from '../support/chromium.js';

const skip = chromiumMissing('shared Chromium');

describe.skipIf(skip || !inject('stewardRunDir'))("the run's one Chromium", () => {
  it('keeps each connection to its own contexts and outlives a connection that closes', async () => {
    const first = await openChromium();
    const second = await openChromium();
    try {
      expect(existsSync(join(inject('stewardRunDir')!, 'chromium.json'))).toBe(true);
      const mine = await first.newContext();
      await mine.addCookies([{ name: 'left', value: 'behind', url: 'http://127.0.0.1/' }]);
      expect(second.contexts()).toEqual([]);
      const theirs = await second.newContext();
      expect(await theirs.cookies()).toEqual([]);

      await first.close();
      expect(first.isConnected()).toBe(false);
      const page = await theirs.newPage();
      expect(await page.evaluate(() => navigator.userAgent)).toContain('Chrome');
      const third = await openChromium();
      expect(third.contexts()).toEqual([]);
      await third.close();
    } finally {
      await first.close();
      await second.close();
    }
  }, 60_000);
});
