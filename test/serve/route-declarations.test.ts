/**
 * Each route of `steward serve` is declared once (src/http/route.ts): the app registers,
 * validates and documents it from that declaration. So the document and the app cannot
 * disagree — every documented operation answers at its method and path, every registered
 * route is documented — and a request that breaks a declared schema is refused by the
 * validation derived from it, in the one error body. The inspector's API is declared the same
 * way: what it registers is what its declarations list.
 */
import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { errorHandler } from '../../src/http/errors.js';
import { inspectorApi, inspectorContext } from '../../src/inspect/server.js';
import { DemoModel } from '../../src/models/demo-model.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import { createServeApp } from '../../src/serve/embed.js';
import { MemoryStore } from '../../src/store/memory-store.js';

const TOKEN = 'test-token-0123456789abcdef';
const closing: Array<() => unknown> = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

type Operation = { requestBody?: unknown; parameters?: { in: string; name: string }[]; security?: unknown[] };
type Document = { paths: Record<string, Record<string, Operation>> };

function serveApp() {
  const store = new MemoryStore();
  const runtime = createRuntime({ model: new DemoModel(), store });
  const steward = createServeApp({ runtime, store, auth: { token: TOKEN }, publicUrl: 'http://127.0.0.1:4800', log: () => {} });
  closing.push(() => steward.close(0));
  const call = (method: string, path: string, init: { body?: string; headers?: Record<string, string> } = {}) =>
    steward.app.request(path, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}), ...init.headers },
      ...(init.body !== undefined ? { body: init.body } : {}),
    });
  return { app: steward.app, call };
}

/** A concrete path for a documented one: a session id that is not there, a package that is, a link that is none. */
const concrete = (path: string) => path.replace('{id}', 's-none').replace('{packageId}', 'tiny').replace('{token}', 'not.a-link');
/** Hono's pattern of a documented path. */
const pattern = (path: string) => path.replace(/\{(\w+)\}/g, ':$1');
const operations = (doc: Document) =>
  Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item).map(([method, operation]) => ({ path, method, operation })));

describe('the routes of steward serve, declared once', () => {
  it('every documented operation answers at its method and path, and every registered route is documented', async () => {
    const { app, call } = serveApp();
    const doc = (await (await call('GET', '/openapi.json')).json()) as Document;
    const documented = operations(doc);
    expect(documented.length).toBeGreaterThan(15);
    for (const { path, method } of documented) {
      const answer = await call(method.toUpperCase(), concrete(path));
      // An answer of the route (a 404 of its own: no such session; a decision link's page), never the app's "No route".
      const json = (answer.headers.get('content-type') ?? '').startsWith('application/json');
      const body = method === 'head' || !json ? null : ((await answer.json()) as { error?: { message: string } });
      if (!json && method !== 'head') expect(answer.headers.get('content-type'), `${method} ${path}`).toMatch(/^text\/html/);
      expect(body?.error?.message ?? '', `${method} ${path}`).not.toMatch(/^No route/);
    }
    // Registered handlers (middleware is registered for every method, ALL): each is documented.
    const registered = new Set(app.routes.filter((r) => r.method !== 'ALL').map((r) => `${r.method.toLowerCase()} ${r.path}`));
    const declared = new Set(documented.filter((o) => o.method !== 'head').map((o) => `${o.method} ${pattern(o.path)}`));
    expect([...registered].sort()).toEqual([...declared].sort());
  });

  it("a request that breaks a route's declared schema is a 400 invalid_request naming the field, before the route runs", async () => {
    const { call } = serveApp();
    const doc = (await (await call('GET', '/openapi.json')).json()) as Document;
    const withId = operations(doc).filter(({ operation }) => operation.parameters?.some((p) => p.in === 'path' && p.name === 'id'));
    expect(withId.length).toBeGreaterThan(5);
    for (const { path, method, operation } of withId) {
      const refused = await call(method.toUpperCase(), path.replace('{id}', 'a%1Bb'), operation.requestBody ? { body: '{}' } : {});
      expect(refused.status, `${method} ${path}`).toBe(400);
      const { error } = (await refused.json()) as { error: { code: string; message: string; issues: { path: string }[] } };
      expect(error.code).toBe('invalid_request');
      expect(error.message).toMatch(/^Invalid path: id: .*1 to 200 characters/);
      expect(error.issues).toEqual([expect.objectContaining({ path: 'id' })]);
    }
    // A JSON body that is no object breaks every declared body (A2A answers it in JSON-RPC, as its SDK would).
    const withBody = operations(doc).filter(({ operation }) => operation.requestBody !== undefined);
    expect(withBody.length).toBeGreaterThan(4);
    for (const { path, method } of withBody) {
      const refused = await call(method.toUpperCase(), concrete(path).replace('s-none', 's-body'), { body: '[1]' });
      const body = (await refused.json()) as { error: { code: string | number; message: string } };
      if (path === '/a2a/{packageId}') {
        expect(body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
        continue;
      }
      expect(refused.status, `${method} ${path}`).toBe(400);
      expect(body.error.code).toBe('invalid_request');
      expect(body.error.message).toMatch(/^Invalid (body|event): /);
    }
    // A query parameter the declaration does not know, and a header that breaks its schema.
    const unknown = await call('GET', '/sessions?page=2');
    expect(((await unknown.json()) as { error: { message: string } }).error.message).toMatch(/^Invalid query: .*page/);
    const header = await call('GET', '/sessions/s-none/stream', { headers: { 'last-event-id': 'not-an-id' } });
    expect(header.status).toBe(400);
    expect(((await header.json()) as { error: { message: string } }).error.message).toMatch(/^Invalid Last-Event-ID header: /);
  });
});

describe("the inspector's API, declared the same way", () => {
  it('registers exactly the routes its declarations list, each validated by its declaration', async () => {
    const store = new MemoryStore();
    const runtime = createRuntime({ model: new DemoModel(), store });
    const ctx = inspectorContext(runtime, store, () => {});
    closing.push(async () => ctx.hub.close());
    const api = inspectorApi(ctx, 'inspector-token', () => {});
    const doc = api.getOpenAPI31Document({ openapi: '3.1.0', info: { title: 'inspector', version: '1' } }) as unknown as Document;
    const declared = new Set(operations(doc).map((o) => `${o.method} ${pattern(o.path)}`));
    const registered = new Set(api.routes.filter((r) => r.method !== 'ALL').map((r) => `${r.method.toLowerCase()} ${r.path}`));
    expect([...registered].sort()).toEqual([...declared].sort());
    // Failures answer in the one error body of the app the API is mounted on.
    const app = new Hono().onError(errorHandler('inspector', () => {})).route('/api', api);
    const refused = await app.request('/api/sessions/s-1/at/zero', { headers: { 'x-steward-token': 'inspector-token' } });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toBe('Journal entry "zero" is not a number ≥ 1.');
  });
});
