/**
 * steward/react's useSession in Chromium (React 19, StrictMode), on a real `steward serve`:
 * the page (bundled with esbuild from test/react/session-page.tsx) follows a session while
 * the test sends through the hook's `send`, to `done`. It sees the view move, the enabled
 * events of each wait (none while a send runs), the live events and the stream's status.
 * The draft's rules (deltas per tag, reset on publish and at the end of the run) are
 * checked on the framework-free SessionFeed with a scripted stream (session-feed.test.ts).
 */
import { join } from 'node:path';
import { build } from 'esbuild';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { StewardClient } from '../../src/client.js';
import type { UseSession } from '../../src/react.js';
import { DemoModel } from '../../src/models/demo-model.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import { startServe, type ServeHandle } from '../../src/serve/server.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { root } from '../support/cli-process.js';
import { pageServer, type PageServer } from '../support/page-proxy.js';
import { chromiumMissing } from '../support/chromium.js';
import { workerPages } from '../support/kept-pages.js';

const skip = chromiumMissing('useSession');

const TOKEN = 'react-test-token';
let page: PageServer;
let server: ServeHandle;

interface Shown {
  state: string | null;
  status: string;
  enabledEvents: string[];
  draft: unknown;
  events: string[];
  error: string | null;
}

beforeAll(async () => {
  if (skip) return;
  const bundle = await build({
    entryPoints: [join(root, 'test/react/session-page.tsx')],
    bundle: true,
    platform: 'browser',
    format: 'esm',
    write: false,
    jsx: 'automatic',
    define: { 'process.env.NODE_ENV': '"development"' },
    logLevel: 'silent',
  });
  let api: string | undefined;
  page = await pageServer(
    { files: { '/index.html': '<!doctype html><div id="root"></div><script type="module" src="/page.js"></script>', '/page.js': bundle.outputFiles[0]!.text } },
    () => api,
  );
  const store = new MemoryStore();
  server = await startServe({
    runtime: createRuntime({ model: new DemoModel(), store }),
    store,
    port: 0,
    token: TOKEN,
    corsOrigins: [page.origin],
    log: () => {},
  });
  api = server.url;
  await workerPages().ready();
}, 60_000);

afterAll(async () => {
  await page?.close();
  await server?.close();
});

/** What the page puts on window (test/react/session-page.tsx). */
interface PageWindow {
  session: UseSession;
  commits: { state: string | null; enabledEvents: readonly string[] }[];
}

const shown = async (tab: Page): Promise<Shown> => JSON.parse((await tab.textContent('#session')) ?? 'null') as Shown;

describe.skipIf(skip)('useSession in Chromium', () => {
  it('follows a session to done: view, enabled events, live events, status; sends through the hook', async () => {
    const { view } = await new StewardClient({ baseUrl: server.url, token: TOKEN }).create({ packageId: 'tiny' });
    const tab = await workerPages().take();
    // Handed back however the test ends: a page left open keeps its server's streams open.
    onTestFinished(() => workerPages().release(tab));
    const errors: string[] = [];
    tab.on('pageerror', (e) => errors.push(String(e)));
    await tab.goto(`${page.url}?id=${view.id}&token=${TOKEN}`);
    await tab.waitForFunction(() => document.querySelector('#session')?.textContent?.includes('"status":"live"'));
    await tab.waitForFunction(() => document.querySelector('#session')?.textContent?.includes('waiting_user.intake'));
    expect(await shown(tab)).toMatchObject({ state: 'waiting_user.intake', enabledEvents: ['user_submitted_input'], error: null });

    const waits: string[] = [];
    for (let i = 0; i < 10; i++) {
      const now = await shown(tab);
      if (now.state === 'done') break;
      waits.push(`${now.state}: ${now.enabledEvents.join(' ')}`);
      const commitsBefore = await tab.evaluate(() => (window as unknown as PageWindow).commits.length);
      const ok = await tab.evaluate(async () => {
        const s = (window as unknown as PageWindow).session;
        const v = s.view!;
        const event =
          v.waitingReason === 'intake'
            ? { type: 'user_submitted_input' as const, text: 'Green tea.' }
            : v.waitingReason === 'approve_step'
              ? { type: 'user_approved_next_step' as const, edits: { reason: 'Two lines, no more.' } }
              : { type: 'user_accepted_artifact' as const, artifactId: v.artifact!.id, edits: { [v.artifact!.tags[0]!.tag]: 'Edited by the reviewer.' } };
        return (await s.send(event)).ok;
      });
      expect(ok).toBe(true);
      // While the send ran, the page offered nothing: a commit in the old state with no enabled events.
      const commits = await tab.evaluate((from) => (window as unknown as PageWindow).commits.slice(from), commitsBefore);
      expect(commits.some((c) => c.state === now.state && c.enabledEvents.length === 0)).toBe(true);
      await tab.waitForFunction((prev) => !document.querySelector('#session')?.textContent?.includes(`"state":"${prev}"`), now.state);
    }
    await tab.waitForFunction(() => document.querySelector('#session')?.textContent?.includes('"status":"done"'));
    const end = await shown(tab);
    expect(end).toMatchObject({ state: 'done', status: 'done', enabledEvents: [], draft: null, error: null });
    expect(waits[0]).toBe('waiting_user.intake: user_submitted_input');
    expect(waits).toContain('waiting_user.approve_step: user_approved_next_step user_rejected_next_step');
    expect(waits.some((w) => w.startsWith('waiting_user.review_artifact: ') && w.includes('user_accepted_artifact'))).toBe(true);
    for (const type of ['round_started', 'artifact_published', 'waiting', 'done']) expect(end.events).toContain(type);
    // The edits reached the server: the accepted body is the reviewer's.
    const journal = await new StewardClient({ baseUrl: server.url, token: TOKEN }).journal(view.id);
    expect(JSON.stringify(journal.entries)).toContain('Edited by the reviewer.');
    expect(errors).toEqual([]);
  }, 60_000);
});
