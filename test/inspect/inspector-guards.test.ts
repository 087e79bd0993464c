/**
 * The inspector's share of the HTTP guards (src/http/security.ts) and its security headers,
 * over real HTTP on 127.0.0.1 (node:http, so Host and Origin are exactly what is sent):
 * another site's page (Origin) is a 403, a body that is not JSON a 415, its own page's
 * requests pass; every answer — page, asset, API, error — carries nosniff, no-referrer and
 * its cache policy; what the log quotes of a request is inert text.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime, MemoryStore } from '../../src/index.js';
import { DemoModel } from '../../src/testing.js';
import { startInspector, type InspectorHandle } from '../../src/inspect/server.js';
import { rawRequest } from '../support/raw-http.js';
import { buildPage } from './page-build.js';

let pageDir = '';
beforeAll(async () => {
  pageDir = await buildPage();
}, 60_000);

const open: InspectorHandle[] = [];
afterEach(async () => {
  while (open.length) await open.pop()!.close();
});

async function setup(store = new MemoryStore()) {
  const runtime = createRuntime({ model: new DemoModel(), store });
  const logged: string[] = [];
  const inspector = await startInspector({ runtime, store, port: 0, pageDir, log: (m) => logged.push(m) });
  open.push(inspector);
  const port = Number(new URL(inspector.url).port);
  const host = `127.0.0.1:${port}`;
  const send = (method: string, path: string, headers: Record<string, string> = {}, body?: string) =>
    rawRequest(port, method, path, { host, ...headers }, body);
  return { store, inspector, port, host, send, logged, token: { 'x-steward-token': inspector.token } };
}

const json = { 'content-type': 'application/json' };

describe('the inspector: Origin and content type', () => {
  it("refuses another site's page (403) and a body that is not JSON (415), and creates nothing", async () => {
    const { store, send, token, host } = await setup();
    const body = JSON.stringify({ packageId: 'tiny' });
    for (const origin of ['http://evil.example', 'null', `http://rebind.example:${host.split(':')[1]}`]) {
      const read = await send('GET', '/api/sessions', { ...token, origin });
      expect(read.status, origin).toBe(403);
      // The one error shape of both servers (src/http/errors.ts): `{ error }`, nothing else.
      expect(Object.keys(read.body)).toEqual(['error']);
      expect(read.body).toMatchObject({ error: { code: 'forbidden_origin' } });
      expect((await send('POST', '/api/sessions', { ...token, ...json, origin }, body)).status, origin).toBe(403);
    }
    for (const type of ['text/plain', 'application/x-www-form-urlencoded']) {
      const sent = await send('POST', '/api/sessions', { ...token, 'content-type': type }, body);
      expect(sent.status, type).toBe(415);
      expect(sent.body).toMatchObject({ error: { code: 'unsupported_media_type', message: expect.stringContaining('application/json') } });
    }
    expect((await store.list()).sessions).toEqual([]);
  });

  it("takes its own page's requests: its origin, JSON with a charset", async () => {
    const { store, send, token, host } = await setup();
    const created = await send(
      'POST',
      '/api/sessions',
      { ...token, origin: `http://${host}`, 'content-type': 'application/json; charset=utf-8' },
      JSON.stringify({ packageId: 'tiny' }),
    );
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect((await store.list()).sessions).toHaveLength(1);
  });
});

describe('the inspector: security headers', () => {
  it('are on every answer: the page, an asset, the API, its errors', async () => {
    const { send, token } = await setup();
    const asset = readdirSync(join(pageDir, 'assets')).find((name) => name.endsWith('.js'))!;
    const cases: Array<[string, Record<string, string>, number, string]> = [
      ['/', {}, 200, 'no-cache'],
      ['/sessions/some-deep-link', {}, 200, 'no-cache'],
      [`/assets/${asset}`, {}, 200, 'public, max-age=3600'],
      ['/assets/missing.js', {}, 404, 'no-store'],
      ['/api/info', token, 200, 'no-store'],
      ['/api/info', {}, 403, 'no-store'],
    ];
    for (const [path, headers, status, cache] of cases) {
      const res = await send('GET', path, headers);
      expect(res.status, path).toBe(status);
      expect(res.headers['x-content-type-options'], path).toBe('nosniff');
      expect(res.headers['referrer-policy'], path).toBe('no-referrer');
      expect(res.headers['cache-control'], path).toBe(cache);
    }
  });
});

describe('the inspector: its log', () => {
  it('shows a request path with escape sequences, CR/LF and an OSC title as inert text', async () => {
    class FailingStore extends MemoryStore {
      override async load(): Promise<never> {
        throw new Error('disk on fire');
      }
    }
    const { send, token, logged } = await setup(new FailingStore());
    const path = `/api/sessions/${encodeURIComponent('x\u001b]0;pwned\u0007\r\ninspector: forged line\u001b[2J\u009b')}`;
    const failed = await send('GET', path, token);
    expect(failed.status).toBe(500);
    // The page is told that it failed, the log what failed (as `steward serve` does).
    expect(failed.body).toEqual({ error: { code: 'internal_error', message: expect.stringContaining('log') } });
    expect(JSON.stringify(failed.body)).not.toContain('disk on fire');
    const line = logged.find((l) => l.includes('disk on fire'));
    expect(line).toBeDefined();
    expect(line!.split('\n')[0]).toMatch(
      /^inspector: GET \/api\/sessions\/x␛\]0(;|%3B)pwned␇␍␊inspector(:|%3A) forged line␛\[2J\\x9b failed: Error: disk on fire$/,
    );
    // eslint-disable-next-line no-control-regex
    expect(line).not.toMatch(/[\u001b\u0007\r\u009b]/);
  });
});
