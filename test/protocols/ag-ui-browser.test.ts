/**
 * A page built with `@ag-ui/client` (bundled here by esbuild) in Chromium, against `steward
 * serve`: it sends a request, approves the step and accepts the artifact, by its buttons.
 * The page is served at the server's own origin (page.route fulfils only the document; its
 * fetches reach the real server). Skipped — with a message — only when /usr/bin/chromium is
 * missing outside CI.
 */
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { beforeAll, expect, it } from 'vitest';
import { DemoModel } from '../../src/models/demo-model.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import { startServe } from '../../src/serve/server.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { chromiumMissing } from '../support/chromium.js';
import { workerPages } from '../support/kept-pages.js';

const skip = chromiumMissing('AG-UI browser');

beforeAll(async () => {
  if (skip) return;
  await workerPages().ready();
});

async function pageHtml(): Promise<string> {
  const bundled = await build({
    entryPoints: [fileURLToPath(new URL('./page/ag-ui-page.ts', import.meta.url))],
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    logLevel: 'silent',
  });
  const script = bundled.outputFiles[0]!.text.replaceAll('</script', '<\\/script');
  return `<!doctype html><html><head><meta charset="utf-8"><title>AG-UI page</title></head><body>
<input id="request" value="A story about a lighthouse keeper."><button id="send">Send</button>
<button id="approve">Approve</button><button id="accept">Accept</button>
<p>reason: <span id="reason"></span></p><p id="message"></p><p>phase: <span id="phase"></span></p><p id="error"></p>
<script>${script}</script></body></html>`;
}

it.skipIf(skip)('a page built with @ag-ui/client approves a step and accepts an artifact', async () => {
  const store = new MemoryStore();
  const runtime = createRuntime({ model: new DemoModel(), store });
  const server = await startServe({ runtime, store, port: 0, log: () => {} });
  const page = await workerPages().take();
  try {
    const html = await pageHtml();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.route(`${server.url}/page`, (route) => route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: html }));
    await page.goto(`${server.url}/page`);

    await page.click('#send');
    await expect.poll(() => page.textContent('#reason')).toBe('tool_call');
    expect(await page.textContent('#message')).toContain('brief-writer');

    await page.click('#approve');
    await expect.poll(() => page.textContent('#reason')).toBe('steward:artifact_review');

    await page.click('#accept');
    await expect.poll(() => page.textContent('#reason')).toBe('tool_call');
    expect(await page.textContent('#message')).toContain('outliner');
    expect(await page.textContent('#error')).toBe('');
    expect(errors).toEqual([]);

    const view = (await server.host.view('browser-thread')).view;
    expect(view.artifacts).toEqual([{ id: 'a1', workerId: 'brief-writer', status: 'accepted' }]);
    expect(view.waitingReason).toBe('approve_step');
  } finally {
    await workerPages().release(page);
    await server.close();
  }
});
