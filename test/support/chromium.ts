/**
 * Debian's Chromium, driven by playwright-core (no browser download), for the browser tests: one
 * place for where it is, when a test may skip without it (never in CI, which installs it), and
 * how it starts.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/** The flags every browser test starts Chromium with: headless, as root in a container, nothing fetched on its own. */
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'];

/** Whether `what`'s browser tests skip: Chromium is missing here and this is not CI (where they always run); says so once. */
export function chromiumMissing(what: string): boolean {
  const missing = !existsSync(CHROMIUM) && !process.env.CI;
  if (missing) console.warn(`[${what}] SKIPPED: ${CHROMIUM} is missing (apt-get install -y chromium). These tests always run in CI.`);
  return missing;
}

/** Starts Chromium with CHROMIUM_ARGS and `extraArgs`. */
export const launchChromium = (extraArgs: readonly string[] = []): Promise<Browser> =>
  chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS, ...extraArgs] });
