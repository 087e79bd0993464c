/**
 * The examples in examples/, installed as a user would: each folder is copied to a temporary
 * app whose `steward` dependency points at the packed tarball, installed from the npm
 * registry (preferring the local cache) on a copy of the shared install of that tarball, then
 * run (node-app; serve-embed: `npm run check`) or built with Vite and opened in Chromium
 * (browser, react: clicked through to `done`).
 *
 * The browser part is skipped — with a message — only when /usr/bin/chromium is missing
 * outside CI; in CI (CI=true) it always runs.
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { root } from '../support/cli-process.js';
import { copyInstall, installedSteward, npmInstall, packedTarball } from '../support/tarball.js';
import { chromiumMissing } from '../support/chromium.js';
import { workerPages } from '../support/kept-pages.js';

const run = promisify(execFile);
const noBrowser = chromiumMissing('examples');

const apps = new Map<string, string>();
const cleanups: (() => unknown)[] = [];

/** Copies examples/NAME to a temporary folder, points `steward` at the tarball, installs. */
async function install(name: string, tarball: string): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), `steward-example-${name}-`));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  cpSync(join(root, 'examples', name), dir, { recursive: true, filter: (src) => !/node_modules|dist$/.test(src) });
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  expect(pkg.dependencies.steward).toBe('file:../../steward-0.1.0.tgz');
  pkg.dependencies.steward = `file:${tarball}`;
  writeFileSync(join(dir, 'package.json'), JSON.stringify(pkg, null, 2));
  // The example's package.json is its own: npm adds its packages (vite, react…) to a copy of the
  // install test/support/tarball.ts shares between the test files and keeps steward and its
  // dependencies as they are, instead of unpacking them again for each example. The install into
  // an empty app is test/consumer's.
  await copyInstall(await installedSteward(), dir, { manifest: false });
  const ms = await npmInstall(dir);
  console.log(`examples/${name}: npm install ${(ms / 1000).toFixed(1)} s`);
  apps.set(name, dir);
}

beforeAll(async () => {
  const tarball = await packedTarball();
  await Promise.all(['node-app', 'serve-embed', ...(noBrowser ? [] : ['browser', 'react'])].map((name) => install(name, tarball.file)));
}, 900_000);

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
}, 120_000);

// These two run npm and a Node process or two: seconds, but longer on a busy machine.
describe('examples/node-app', () => {
  it('runs a demo session to done with the installed runtime', async () => {
    const { stdout } = await run('npm', ['start', '--silent'], { cwd: apps.get('node-app')! });
    expect(stdout).toContain('waiting_user.approve_step');
    expect(stdout).toContain('done: 2 artifacts accepted');
    expect(stdout).toContain('#summary v1 by summarize');
  }, 120_000);
});

describe('examples/serve-embed', () => {
  it("mounts Steward's routes in its own hono app and drives a session through them with its own auth", async () => {
    const { stdout } = await run('npm', ['run', 'check', '--silent'], { cwd: apps.get('serve-embed')! });
    expect(stdout).toMatch(/send: 202 \{"accepted":true/);
    expect(stdout).toContain('live: round_started');
    expect(stdout).toContain('live: waiting');
    expect(stdout).toContain('by: alice');
  }, 120_000);
});

const types: Record<string, string> = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css' };

/** Serves a built folder on 127.0.0.1 (module scripts do not load from file://). */
async function serve(dir: string): Promise<string> {
  const server: Server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)).replace(/^(\.\.[/\\])+/, '');
    const file = join(dir, path.endsWith('/') ? `${path}index.html` : path);
    if (!file.startsWith(dir) || !existsSync(file)) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': types[extname(file)] ?? 'application/octet-stream' }).end(readFileSync(file));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise((resolve) => server.close(resolve)));
  const address = server.address() as { port: number };
  return `http://127.0.0.1:${address.port}/`;
}

describe.skipIf(noBrowser)('examples/browser and examples/react in Chromium', () => {
  beforeAll(async () => {
    await workerPages().ready();
  }, 60_000);

  it.each([
    ['browser', '#state'],
    ['react', '[data-testid=state]'],
  ])(
    'examples/%s renders the enabled events and clicks through to done',
    async (name, stateSelector) => {
      const dir = apps.get(name)!;
      await run('npx', ['--no-install', 'vite', 'build', '--logLevel', 'error'], { cwd: dir });
      const url = await serve(join(dir, 'dist'));
      const page = await workerPages().take();
      // Handed back however the test ends: a page left open keeps its server's streams open.
      onTestFinished(() => workerPages().release(page));
      const errors: string[] = [];
      page.on('pageerror', (error) => errors.push(String(error)));
      await page.goto(url);
      const state = () => page.textContent(stateSelector);
      const seen: string[] = [];
      // What a person would click, in order of preference, at each wait.
      const preferred = ['user_submitted_input', 'user_confirmed_intake', 'user_approved_next_step', 'user_accepted_artifact'];
      for (let i = 0; i < 10 && (await state()) !== 'done'; i++) {
        await page.waitForSelector('button[data-event]', { timeout: 10_000 });
        const enabled = await page.$$eval('button[data-event]', (buttons) => buttons.map((b) => (b as HTMLElement).dataset.event!));
        seen.push(`${await state()}: ${enabled.join(' ')}`);
        const next = preferred.find((e) => enabled.includes(e));
        expect(next, `nothing to click in ${seen.at(-1)}`).toBeDefined();
        const before = await state();
        await page.click(`button[data-event=${next}]`);
        await page.waitForFunction(([sel, prev]) => document.querySelector(sel!)?.textContent !== prev, [stateSelector, before] as const);
        await page.waitForFunction((sel) => !document.querySelector(sel)?.textContent?.startsWith('running'), stateSelector);
      }
      expect(errors).toEqual([]);
      expect(await state()).toBe('done');
      expect(seen[0]).toBe('waiting_user.intake: user_submitted_input');
      expect(seen).toContain('waiting_user.approve_step: user_approved_next_step user_rejected_next_step');
      expect(seen.some((s) => s.startsWith('waiting_user.review_artifact: ') && s.includes('user_accepted_artifact'))).toBe(true);
      expect(await page.textContent('body')).toContain('#note v1 by noter');
    },
    60_000,
  );
});
