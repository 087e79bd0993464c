/**
 * Debian's Chromium, driven by playwright-core (no browser download), for the browser tests: one
 * place for where it is, when a test may skip without it (never in CI, which installs it), and
 * how it starts.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { inject } from 'vitest';
import { sharedChromiumEndpoint } from './shared-chromium.js';

export const CHROMIUM = '/usr/bin/chromium';

/**
 * The flags every browser test starts Chromium with: headless, as root in a container, nothing fetched on its own.
 * V8 compiles no further than its baseline compiler (Sparkplug, `--max-opt=1`): a test's page lives
 * seconds, and optimising the inspector's ELK (megabytes of generated code, run once per page) on
 * background threads cost the renderers more CPU than the faster code saved them (bench/README.md).
 */
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run', '--js-flags=--max-opt=1'];

/** Whether `what`'s browser tests skip: Chromium is missing here and this is not CI (where they always run); says so once. */
export function chromiumMissing(what: string): boolean {
  const missing = !existsSync(CHROMIUM) && !process.env.CI;
  if (missing) console.warn(`[${what}] SKIPPED: ${CHROMIUM} is missing (apt-get install -y chromium). These tests always run in CI.`);
  return missing;
}

/**
 * The run's one Chromium (CHROMIUM_ARGS), connected to for the calling file (see
 * shared-chromium.ts); without the run's global setup (another config), one of the file's own.
 * Either way close() when done: on the shared browser it closes only the contexts (and pages)
 * opened through this connection and disconnects; the browser stays for the other files.
 */
export async function openChromium(): Promise<Browser> {
  const runDir = inject('stewardRunDir');
  if (!runDir) return launchChromium();
  return chromium.connect(await sharedChromiumEndpoint(runDir, { executablePath: CHROMIUM, args: CHROMIUM_ARGS }));
}

/**
 * The run's folder of laid-out charts (an inspector's `layoutsDir`): the pages of every file in
 * the run draw the chart from the layout the first one made, instead of each running ELK again
 * (seconds of CPU a load). Without the run's global setup: none (each page lays out).
 */
export function runLayoutsDir(): string | undefined {
  const runDir = inject('stewardRunDir');
  return runDir ? join(runDir, 'inspector-layouts') : undefined;
}

/** Starts a Chromium of the caller's own with CHROMIUM_ARGS and `extraArgs` (flags that cannot be set per context). */
export const launchChromium = (extraArgs: readonly string[] = []): Promise<Browser> =>
  chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS, ...extraArgs] });
