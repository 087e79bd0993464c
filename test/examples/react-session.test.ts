/**
 * examples/react-session as a user builds it: installed from the packed tarball (steward,
 * react, react-dom, vite from the npm registry; `npm install` in the example's folder, on a
 * copy of the install test/support/tarball.ts shares between the test files), built with Vite, opened in Chromium, and
 * driven to `done` on a `steward serve --packages` of the app's own package (written by the
 * installed CLI's `steward init-package`; the server is this repository's CLI, its model the
 * real `openai` client against a local fake that streams like the demo model): the request
 * typed in, each step approved with an edited task, each artifact accepted with an edited
 * body. The page is on another origin than the server (`--cors-origin`): CORS, the bearer
 * header, the async send and the fetch-based stream of the wire contract. The drafts it
 * showed, built from `artifact_delta`s, end as the bodies the workers published.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { StewardClient } from '../../src/client.js';
import { startCli, until, root, type RunningCli } from '../support/cli-process.js';
import { demoResponder } from '../support/demo-replies.js';
import { startFakeOpenAI, type FakeOpenAI } from '../support/fake-openai-server.js';
import { pageServer, type PageServer } from '../support/page-proxy.js';
import { copyInstall, installedSteward, npmInstall, packedTarball } from '../support/tarball.js';
import { chromiumMissing } from '../support/chromium.js';
import { workerPages } from '../support/kept-pages.js';

const run = promisify(execFile);
const skip = chromiumMissing('examples/react-session');

const TOKEN = 'example-token-of-24-chars';
const cleanups: (() => unknown)[] = [];
let page: PageServer;
let serve: RunningCli;
let serveUrl = '';
let openai: FakeOpenAI;
const PACKAGE = 'otter-notes';

beforeAll(async () => {
  if (skip) return;
  const tarball = await packedTarball();
  const dir = mkdtempSync(join(tmpdir(), 'steward-example-react-session-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  cpSync(join(root, 'examples/react-session'), dir, { recursive: true, filter: (src) => !/node_modules|dist$/.test(src) });
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  expect(pkg.dependencies.steward).toBe('file:../../steward-0.1.0.tgz');
  pkg.dependencies.steward = `file:${tarball.file}`;
  writeFileSync(join(dir, 'package.json'), JSON.stringify(pkg, null, 2));
  // The example's package.json is its own: npm adds react, react-dom and vite to the copied
  // install of the tarball and keeps steward and its built better-sqlite3 as they are.
  await copyInstall(await installedSteward(), dir, { manifest: false });
  await npmInstall(dir);
  await run('npx', ['--no-install', 'vite', 'build', '--logLevel', 'error'], { cwd: dir });

  // The app's own package, from the installed CLI (it needs no store).
  await run(process.execPath, [join(dir, 'node_modules/steward/bin/steward.mjs'), 'init-package', PACKAGE, '--dir', 'packages'], { cwd: dir });
  page = await pageServer({ dir: join(dir, 'dist') }, () => serveUrl, { dropOrigin: false });
  cleanups.push(() => page.close());
  const responder = demoResponder();
  openai = await startFakeOpenAI(async (body, n) => {
    const step = await responder(body, n);
    // Streamed in small pieces with a pause, so a page sees the draft grow.
    return 'reply' in step ? { reply: { ...step.reply, pieces: 8, chunkDelayMs: 15 } } : step;
  });
  cleanups.push(() => openai.close());
  serve = startCli(['--packages', join(dir, 'packages'), 'serve', '--port', '0', '--cors-origin', page.origin], {
    db: join(dir, 'serve.db'),
    env: { STEWARD_TOKEN: TOKEN, OPENAI_BASE_URL: openai.baseURL, OPENAI_API_KEY: 'test-key', OPENAI_MODEL: 'fake' },
    timeoutMs: 240_000,
  });
  cleanups.push(() => serve.child.kill('SIGTERM'));
  serveUrl = await until(
    () =>
      /Steward serve on (http:\/\/\S+)/.exec(serve.stdout)?.[1] ??
      (serve.stderr
        ? (() => {
            throw new Error(serve.stderr);
          })()
        : undefined),
    'steward serve to start',
    60_000,
  );
  await workerPages().ready();
}, 900_000);

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
}, 120_000);

describe.skipIf(skip)('examples/react-session in Chromium', () => {
  it('drives a session on steward serve to done: approving with an edited task, accepting with edited bodies; the draft streams', async () => {
    const tab = await workerPages().take();
    // Handed back however the test ends: a page left open keeps its server's streams open.
    onTestFinished(() => workerPages().release(tab));
    const errors: string[] = [];
    tab.on('pageerror', (e) => errors.push(String(e)));
    await tab.goto(`${page.url}?api=${encodeURIComponent(serveUrl)}&token=${TOKEN}&package=${PACKAGE}`);
    // Every text the draft showed, as the page rendered it.
    await tab.evaluate(() => {
      const w = window as unknown as { drafts: string[] };
      w.drafts = [];
      new MutationObserver(() => {
        const text = document.querySelector('[data-testid=draft]')?.textContent;
        if (text && text !== w.drafts.at(-1)) w.drafts.push(text);
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    const state = () => tab.textContent('[data-testid=state]');
    const published: string[] = [];
    const waits: string[] = [];
    for (let i = 0; i < 12; i++) {
      await tab.waitForFunction(
        () => {
          const s = document.querySelector('[data-testid=state]')?.textContent ?? '';
          return s === 'done' || (s.startsWith('waiting_user') && document.querySelector('button[data-event]'));
        },
        undefined,
        { timeout: 20_000 },
      );
      const now = (await state())!;
      if (now === 'done') break;
      waits.push(now);
      if (await tab.$('button[data-event=user_submitted_input]')) {
        await tab.fill('textarea[name=input]', 'A short note about otters.');
        await tab.click('button[data-event=user_submitted_input]');
      } else if (await tab.$('button[data-event=user_approved_next_step]')) {
        await tab.fill('textarea[name=reason]', `Edited task ${i}: two lines, no more.`);
        await tab.click('button[data-event=user_approved_next_step]');
      } else if (await tab.$('button[data-event=user_accepted_artifact]')) {
        const areas = await tab.$$('form textarea');
        for (const area of areas) published.push(await area.inputValue());
        await areas[0]!.fill(`Edited body ${i}.`);
        await tab.click('button[data-event=user_accepted_artifact]');
      } else if (await tab.$('button[data-event=user_confirmed_intake]')) {
        await tab.click('button[data-event=user_confirmed_intake]');
      }
      await tab.waitForFunction((prev) => document.querySelector('[data-testid=state]')?.textContent !== prev, now, { timeout: 20_000 });
    }
    expect(await state()).toBe('done');
    expect(waits).toContain('waiting_user.approve_step');
    expect(waits).toContain('waiting_user.review_artifact');
    expect(errors).toEqual([]);

    // What the server recorded: the user's edits, as sent from the page.
    const client = new StewardClient({ baseUrl: serveUrl, token: TOKEN });
    const [session] = (await client.list({ limit: 1 })).sessions;
    expect(session!.packageId).toBe(PACKAGE);
    const events = (await client.journal(session!.id)).entries.filter((e) => e.kind === 'event').map((e) => JSON.stringify(e.payload));
    expect(events.some((e) => e.includes('user_approved_next_step') && e.includes('Edited task'))).toBe(true);
    expect(events.some((e) => e.includes('user_accepted_artifact') && e.includes('Edited body'))).toBe(true);
    expect(await tab.textContent('[data-testid=blackboard]')).toMatch(/#\w+ v2/);

    // The draft grew in the page, and what it showed last of a tag is the body the worker published.
    const drafts = await tab.evaluate(() => (window as unknown as { drafts: string[] }).drafts);
    expect(drafts.length, 'the page showed no draft: does the server stream artifact_delta?').toBeGreaterThan(2);
    for (const body of published)
      expect(
        drafts.some((d) => d.includes(body)),
        `a draft that ends as ${JSON.stringify(body)}`,
      ).toBe(true);
  }, 120_000);
});
