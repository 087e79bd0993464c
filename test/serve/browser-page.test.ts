/**
 * A web page on another origin (another port of 127.0.0.1) drives `steward serve` in a real
 * browser (playwright-core, Debian's chromium), as an app's UI would: CORS preflights and
 * fetches with the bearer token, an async send, and the live stream read by an EventSource
 * with a stream ticket (no token in the URL) — opened after the run, so what it shows comes
 * from the replay of the current run — and by fetch with the Authorization header.
 * Skipped — with a message — only when /usr/bin/chromium is missing outside CI.
 */
import { startOtherSite } from '../support/other-site.js';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/runtime/runtime.js';
import { startServe } from '../../src/serve/server.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { streamingDemo } from './browser-models.js';
import { client, FIRST_REQUEST_MILESTONES, milestones } from './http.js';
import { chromiumMissing } from '../support/chromium.js';
import { workerPages } from '../support/kept-pages.js';

const skip = chromiumMissing('browser page');

const TOKEN = 'page-token-0123456789abcdef';
let site: { origin: string; close: () => Promise<void> } | undefined;
let siteOrigin = '';
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  if (skip) return;
  await workerPages().ready();
  site = await startOtherSite(() => '<!doctype html><html><head><title>app</title></head><body>an app of its own</body></html>');
  siteOrigin = site.origin;
}, 90_000);

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

afterAll(async () => {
  await site?.close();
});

async function setUp(corsOrigins: string[]): Promise<{ page: Page; api: string }> {
  const store = new MemoryStore();
  const runtime = createRuntime({ model: streamingDemo(), store });
  const server = await startServe({ runtime, store, port: 0, log: () => {}, token: TOKEN, corsOrigins });
  cleanups.push(() => server.close());
  const page = await workerPages().take();
  cleanups.push(() => workerPages().release(page));
  await page.goto(`${siteOrigin}/`);
  return { page, api: server.url };
}

describe.skipIf(skip)('a page on another origin drives steward serve', () => {
  it('creates and sends with fetch (preflight, bearer, async send), then reads the run on an EventSource with a ticket', async () => {
    const { page, api } = await setUp([siteOrigin]);
    const made = await page.evaluate(
      async ({ api, token }) => {
        const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
        const created = await fetch(`${api}/sessions`, { method: 'POST', headers, body: JSON.stringify({ packageId: 'tiny' }) });
        const { view } = await created.json();
        const sent = await fetch(`${api}/sessions/${view.id}/events`, {
          method: 'POST',
          headers: { ...headers, prefer: 'respond-async' },
          body: JSON.stringify({ type: 'user_submitted_input', text: 'Hello' }),
        });
        return { created: created.status, id: view.id as string, sent: sent.status, applied: sent.headers.get('preference-applied'), body: await sent.json() };
      },
      { api, token: TOKEN },
    );
    expect(made).toMatchObject({ created: 201, sent: 202, applied: 'respond-async', body: { accepted: true, sessionId: made.id } });

    // The run ends before the page opens its stream: all it sees is replayed.
    const http = client(api, TOKEN);
    await expect.poll(async () => (await http.get(`/sessions/${made.id}`)).body.view.waitingReason).toBe('approve_step');
    const seen = await page.evaluate(
      async ({ api, token, id }) => {
        const issued = await fetch(`${api}/sessions/${id}/stream-tickets`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
        const { ticket } = await issued.json();
        return new Promise<{ types: string[]; ids: string[]; deltas: string[]; url: string }>((resolve, reject) => {
          const url = `${api}/sessions/${id}/stream?ticket=${encodeURIComponent(ticket)}`;
          const source = new EventSource(url);
          const types: string[] = [];
          const ids: string[] = [];
          const deltas: string[] = [];
          source.addEventListener('session', (e) => {
            const event = JSON.parse((e as MessageEvent).data);
            types.push(event.type);
            ids.push((e as MessageEvent).lastEventId);
            if (event.type === 'text_delta') deltas.push(event.text);
            if (event.type === 'waiting') {
              source.close();
              resolve({ types, ids, deltas, url });
            }
          });
          source.onerror = () => {
            source.close();
            reject(new Error('the EventSource failed'));
          };
        });
      },
      { api, token: TOKEN, id: made.id },
    );
    expect(seen.url).not.toContain(TOKEN);
    expect(milestones(seen.types)).toEqual(FIRST_REQUEST_MILESTONES);
    expect(seen.deltas.join('')).toMatch(/^Thinking….*Reading the request\.Thinking…/); // the test model's own piece, then the demo model's streamed text, per round
    expect(seen.ids.every((id) => id.length > 0)).toBe(true);
  });

  it('reads the stream with fetch and the Authorization header, and resumes it with Last-Event-ID', async () => {
    const { page, api } = await setUp([siteOrigin]);
    const http = client(api, TOKEN);
    const id: string = (await http.post('/sessions', { packageId: 'tiny' })).body.view.id;
    await http.post(`/sessions/${id}/events`, { type: 'user_submitted_input', text: 'Hello' });
    const read = await page.evaluate(
      async ({ api, token, id }) => {
        // A minimal SSE reader over fetch: the messages up to the first `waiting`.
        async function read(lastEventId?: string) {
          const controller = new AbortController();
          const res = await fetch(`${api}/sessions/${id}/stream`, {
            headers: { authorization: `Bearer ${token}`, ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
            signal: controller.signal,
          });
          const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
          const messages: { event: string; id: string; type?: string }[] = [];
          let buffer = '';
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            buffer += value;
            let end: number;
            while ((end = buffer.indexOf('\n\n')) >= 0) {
              const fields = Object.fromEntries(
                buffer
                  .slice(0, end)
                  .split('\n')
                  .map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim()]),
              );
              buffer = buffer.slice(end + 2);
              if (fields.event === 'session') messages.push({ event: 'session', id: fields.id ?? '', type: JSON.parse(fields.data ?? '{}').type });
              if (messages.at(-1)?.type === 'waiting') {
                controller.abort();
                return { status: res.status, messages };
              }
            }
          }
          return { status: res.status, messages };
        }
        const first = await read();
        const middle = first.messages[3]!;
        const resumed = await read(middle.id);
        return { first, resumed, middle };
      },
      { api, token: TOKEN, id },
    );
    expect(read.first.status).toBe(200);
    expect(read.resumed.messages.map((m) => m.type)).toEqual(read.first.messages.slice(4).map((m) => m.type));
  });

  it('an origin that is not listed gets nothing: the preflight is refused', async () => {
    const { page, api } = await setUp([]);
    const outcome = await page.evaluate(
      async ({ api, token }) => {
        try {
          await fetch(`${api}/sessions`, { headers: { authorization: `Bearer ${token}` } });
          return 'read';
        } catch {
          return 'failed';
        }
      },
      { api, token: TOKEN },
    );
    expect(outcome).toBe('failed');
  });
});
