/**
 * What probes and discovery need of `steward serve`: HEAD on the public documents answers
 * like GET without a body (load balancers probe with HEAD); a browser page may send the
 * `A2A-Version` header; the A2A agent card is public, its URLs come from the configured
 * public URL (else the listening address), never from the request's Host, and each skill
 * lists a tag once.
 */
import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { UserError } from '../../src/core/errors.js';
import { DemoModel } from '../../src/models/demo-model.js';
import { agentCard } from '../../src/protocols/a2a/route.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import { createServeApp } from '../../src/serve/embed.js';
import { startServe, type ServeHandle, type ServeOptions } from '../../src/serve/server.js';
import type { SkillPackage } from '../../src/core/skills/package-schema.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { rawRequest as raw } from '../support/raw-http.js';

const TOKEN = 'test-token-0123456789abcdef';
const open: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close();
});

async function serveOn(options: Partial<ServeOptions> = {}): Promise<ServeHandle> {
  const store = new MemoryStore();
  const runtime = createRuntime({ model: new DemoModel(), store });
  const server = await startServe({ runtime, store, port: 0, token: TOKEN, log: () => {}, ...options });
  open.push(() => server.close());
  return server;
}

const cardPath = '/a2a/tiny/.well-known/agent-card.json';

describe('probes and discovery', () => {
  it('HEAD /healthz and HEAD /openapi.json answer like GET without a body and without a token; other routes still need one', async () => {
    const server = await serveOn();
    for (const path of ['/healthz', '/openapi.json']) {
      const get = await fetch(`${server.url}${path}`);
      const head = await fetch(`${server.url}${path}`, { method: 'HEAD' });
      expect(head.status, path).toBe(200);
      expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
      expect(await head.text()).toBe('');
    }
    expect((await fetch(`${server.url}/sessions`, { method: 'HEAD' })).status).toBe(401);
    // The document says so.
    const document = (await (await fetch(`${server.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, { security?: unknown[] }>> };
    expect(document.paths['/healthz']?.head?.security).toEqual([]);
    expect(document.paths['/openapi.json']?.head).toBeDefined();
    expect(document.paths['/sessions']?.head).toBeUndefined();
  });

  it('a listed page may send A2A-Version (the preflight allows it)', async () => {
    const origin = 'http://localhost:5173';
    const server = await serveOn({ corsOrigins: [origin] });
    const preflight = await raw(server.port, 'OPTIONS', '/a2a/tiny', {
      host: `127.0.0.1:${server.port}`,
      origin,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization, content-type, a2a-version',
    });
    expect(preflight.status).toBe(204);
    expect(String(preflight.headers['access-control-allow-headers']).split(',')).toContain('a2a-version');
  });

  it("the agent card is public; its URLs are the listening address's, whatever Host the request names", async () => {
    const server = await serveOn({ allowedHosts: ['steward.example'] });
    const answer = await raw(server.port, 'GET', cardPath, { host: 'steward.example' });
    expect(answer.status).toBe(200);
    expect(answer.body.supportedInterfaces.map((i: { url: string }) => i.url)).toEqual([`${server.url}/a2a/tiny`, `${server.url}/a2a/tiny`]);
    expect(answer.body.provider.url).toBe(server.url);
    expect(JSON.stringify(answer.body)).not.toContain('steward.example');
    // HEAD as a probe of it, too.
    expect((await fetch(`${server.url}${cardPath}`, { method: 'HEAD' })).status).toBe(200);
  });

  it('with a public URL the card points there (a proxy, a path prefix); a bad one is refused naming the flag', async () => {
    const server = await serveOn({ publicUrl: 'https://agents.example.com/steward/' });
    const card = (await (await fetch(`${server.url}${cardPath}`)).json()) as { supportedInterfaces: Array<{ url: string }>; provider: { url: string } };
    expect(card.supportedInterfaces[0]!.url).toBe('https://agents.example.com/steward/a2a/tiny');
    expect(card.provider.url).toBe('https://agents.example.com/steward');
    await expect(serveOn({ publicUrl: 'ftp://agents.example.com' })).rejects.toThrow(UserError);
    await expect(serveOn({ publicUrl: 'https://agents.example.com/?x=1' })).rejects.toThrow(/--public-url/);
  });

  it('createServeApp: the card uses publicUrl; without one it says how to set it', async () => {
    const store = new MemoryStore();
    const runtime = createRuntime({ model: new DemoModel(), store });
    const withUrl = createServeApp({ runtime, store, auth: { token: TOKEN }, publicUrl: 'https://app.example/steward' });
    const without = createServeApp({ runtime, store, auth: { token: TOKEN } });
    open.push(
      () => withUrl.close(),
      () => without.close(),
    );
    const app = new Hono();
    app.route('/steward', withUrl.app);
    app.route('/other', without.app);
    const card = (await (await app.request(`/steward${cardPath}`)).json()) as { supportedInterfaces: Array<{ url: string }> };
    expect(card.supportedInterfaces[0]!.url).toBe('https://app.example/steward/a2a/tiny');
    const missing = await app.request(`/other${cardPath}`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { message: string } }).error.message).toContain('publicUrl');
  });

  it('a skill lists each tag once', () => {
    const pkg = {
      id: 'note',
      title: 'Note',
      description: 'Notes.',
      workers: [{ id: 'writer', title: 'Writer', description: 'Writes.', outputTags: ['note', 'summary'] }],
    } as unknown as SkillPackage;
    expect(agentCard(pkg, 'http://127.0.0.1:4800', false, 'v1').skills[0]!.tags).toEqual(['note', 'summary']);
  });
});
