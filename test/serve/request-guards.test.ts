/**
 * The HTTP guards of `steward serve` (src/http/security.ts) over real HTTP on 127.0.0.1,
 * with node:http so that the Host and Origin headers are exactly what a browser could send:
 * a foreign Host (DNS rebinding) or Origin is a 403, a body that is not JSON a 415, and what
 * is allowed (the listening address, allowed names, the server's own origin, JSON with a
 * charset) still works. Also what the log and /healthz show of a request and of the store.
 */
import { spawn } from 'node:child_process';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { UserError } from '../../src/core/errors.js';
import { DemoModel } from '../../src/models/demo-model.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import { startServe, type ServeHandle, type ServeOptions } from '../../src/serve/server.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { root, startCli, until } from '../support/cli-process.js';
import { rawRequest as raw } from '../support/raw-http.js';
import { useTempDir } from '../support/temp.js';

const TOKEN = 'test-token-0123456789abcdef';
const tmp = useTempDir('steward-request-guards-');
const open: ServeHandle[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

async function serveOn(options: Partial<ServeOptions> = {}) {
  const store = options.store ?? new MemoryStore();
  const runtime = createRuntime({ model: new DemoModel(), store });
  const logged: string[] = [];
  const server = await startServe({ runtime, store, port: 0, log: (m) => logged.push(m), ...options });
  open.push(server);
  return { server, store, logged };
}

const json = { 'content-type': 'application/json' };
const createBody = JSON.stringify({ packageId: 'tiny' });

describe('steward serve: Host', () => {
  it('refuses a Host that is not its address (DNS rebinding): 403 naming --allow-host, nothing read or created', async () => {
    const { server, store } = await serveOn();
    const host = `rebind.example:${server.port}`;
    const read = await raw(server.port, 'GET', '/sessions', { host });
    expect(read.status).toBe(403);
    expect(read.body).toEqual({ error: { code: 'forbidden_host', message: expect.stringContaining('--allow-host rebind.example') } });
    const write = await raw(server.port, 'POST', '/sessions', { host, ...json }, createBody);
    expect(write.status).toBe(403);
    expect((await raw(server.port, 'GET', '/healthz', { host })).status).toBe(403);
    // No Host at all (HTTP/1.0) names no address either.
    expect((await raw(server.port, 'GET', '/sessions', { host: '' })).status).toBe(403);
    expect((await store.list()).sessions).toEqual([]);
  });

  it('answers on its loopback names, with or without the port being the one it listens on', async () => {
    const { server } = await serveOn();
    for (const host of [`127.0.0.1:${server.port}`, `localhost:${server.port}`, `LOCALHOST:${server.port}`, `[::1]:${server.port}`]) {
      expect((await raw(server.port, 'GET', '/sessions', { host })).status, host).toBe(200);
    }
    expect((await raw(server.port, 'GET', '/sessions', { host: `127.0.0.1:${server.port + 1}` })).status).toBe(403);
    expect((await raw(server.port, 'GET', '/sessions', { host: '127.0.0.1' })).status).toBe(403);
  });

  it('answers on the names the operator allowed: a name on any port, name:port on that port only', async () => {
    const { server, store } = await serveOn({ allowedHosts: ['Steward.Internal', 'proxy.example:8443'] });
    for (const host of ['steward.internal', `steward.internal:${server.port}`, 'steward.internal:443', 'proxy.example:8443']) {
      expect((await raw(server.port, 'GET', '/sessions', { host })).status, host).toBe(200);
    }
    expect((await raw(server.port, 'POST', '/sessions', { host: 'steward.internal', ...json }, createBody)).status).toBe(201);
    expect((await store.list()).sessions).toHaveLength(1);
    for (const host of ['proxy.example', 'proxy.example:8444', 'other.internal']) {
      expect((await raw(server.port, 'GET', '/sessions', { host })).status, host).toBe(403);
    }
  });

  it("bound to every interface: answers on this machine's interface addresses and loopback, not on other names", async () => {
    const { server } = await serveOn({ host: '0.0.0.0', token: TOKEN });
    const auth = { authorization: `Bearer ${TOKEN}` };
    const addresses = Object.values(networkInterfaces())
      .flatMap((list) => list ?? [])
      .map((i) => (i.family === 'IPv6' ? `[${i.address}]` : i.address));
    for (const address of [...addresses, 'localhost']) {
      expect((await raw(server.port, 'GET', '/sessions', { host: `${address}:${server.port}`, ...auth })).status, address).toBe(200);
    }
    expect((await raw(server.port, 'GET', '/sessions', { host: `rebind.example:${server.port}`, ...auth })).status).toBe(403);
  });

  it('`steward serve --allow-host NAME` (repeatable) answers on those names, and only on them; --cors-origin answers that page', async () => {
    const cli = startCli(['serve', '--port', '0', '--allow-host', 'steward.test', '--allow-host', 'other.test:8080', '--cors-origin', 'http://app.test:5173'], {
      db: tmp.path('cli.db'),
    });
    try {
      const port = Number(await until(() => /Steward serve on http:\/\/127\.0\.0\.1:(\d+)/.exec(cli.stdout)?.[1], 'the server URL', 30_000));
      expect((await raw(port, 'GET', '/sessions', { host: 'steward.test' })).status).toBe(200);
      expect((await raw(port, 'GET', '/sessions', { host: 'other.test:8080' })).status).toBe(200);
      expect((await raw(port, 'GET', '/sessions', { host: 'other.test' })).status).toBe(403);
      // --cors-origin: that page's preflight is answered, another's refused.
      const preflight = { host: 'steward.test', 'access-control-request-method': 'POST' };
      expect((await raw(port, 'OPTIONS', '/sessions', { ...preflight, origin: 'http://app.test:5173' })).status).toBe(204);
      expect((await raw(port, 'OPTIONS', '/sessions', { ...preflight, origin: 'http://app.test:5174' })).status).toBe(403);
    } finally {
      cli.child.kill('SIGTERM');
      await cli.result;
    }
  }, 60_000);

  it('refuses an allowed host or origin it cannot read, before it listens', async () => {
    const store = new MemoryStore();
    const runtime = createRuntime({ model: new DemoModel(), store });
    await expect(startServe({ runtime, store, port: 0, log: () => {}, allowedHosts: ['http://x.example/'] })).rejects.toThrow(UserError);
    await expect(startServe({ runtime, store, port: 0, log: () => {}, corsOrigins: ['x.example'] })).rejects.toThrow(/CORS origin "x.example" is not valid/);
  });
});

describe('steward serve: Origin', () => {
  it("refuses a request from another site's page (403), reads and writes, and Origin: null", async () => {
    const { server, store } = await serveOn();
    const host = `127.0.0.1:${server.port}`;
    for (const origin of ['http://evil.example', `http://localhost:${server.port}`, `https://127.0.0.1:${server.port}`, 'null']) {
      const read = await raw(server.port, 'GET', '/sessions', { host, origin });
      expect(read.status, origin).toBe(403);
      expect(read.body.error.code).toBe('forbidden_origin');
      expect((await raw(server.port, 'POST', '/sessions', { host, origin, ...json }, createBody)).status, origin).toBe(403);
    }
    expect((await store.list()).sessions).toEqual([]);
  });

  it('takes its own origin and the allowed ones', async () => {
    const { server, store } = await serveOn({ corsOrigins: ['http://localhost:5173/'] });
    const host = `127.0.0.1:${server.port}`;
    expect((await raw(server.port, 'POST', '/sessions', { host, origin: `http://${host}`, ...json }, createBody)).status).toBe(201);
    expect((await raw(server.port, 'POST', '/sessions', { host, origin: 'http://localhost:5173', ...json }, createBody)).status).toBe(201);
    expect((await raw(server.port, 'GET', '/sessions', { host, origin: 'http://localhost:5174' })).status).toBe(403);
    expect((await store.list()).sessions).toHaveLength(2);
  });
});

describe('steward serve: content type', () => {
  it('refuses a body that is not application/json (415), however it is sent, and creates nothing', async () => {
    const { server, store } = await serveOn();
    const host = `127.0.0.1:${server.port}`;
    for (const type of [
      'text/plain',
      'text/plain;charset=UTF-8',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/jsonx',
      undefined,
    ]) {
      const headers: Record<string, string> = { host, ...(type ? { 'content-type': type } : {}) };
      const sent = await raw(server.port, 'POST', '/sessions', headers, createBody);
      expect(sent.status, type).toBe(415);
      expect(sent.body).toEqual({ error: { code: 'unsupported_media_type', message: expect.stringContaining('Content-Type: application/json') } });
      expect((await raw(server.port, 'POST', '/sessions', headers, ['{"packageId":', '"tiny"}'])).status, `${type} chunked`).toBe(415);
    }
    expect((await store.list()).sessions).toEqual([]);
  });

  it('takes JSON with parameters, and a POST without a body', async () => {
    const { server, store } = await serveOn();
    const host = `127.0.0.1:${server.port}`;
    expect((await raw(server.port, 'POST', '/sessions', { host, 'content-type': 'Application/JSON; charset=utf-8' }, createBody)).status).toBe(201);
    expect((await raw(server.port, 'POST', '/sessions', { host, 'content-type': 'application/json' }, ['{"packageId":', '"tiny"}'])).status).toBe(201);
    expect((await raw(server.port, 'POST', '/sessions', { host, 'content-length': '0' })).status).toBe(201);
    expect((await store.list()).sessions).toHaveLength(3);
  });

  it("the OpenAPI document lists the guards' answers: 403 on every route, 415 where a body goes", async () => {
    const { server } = await serveOn();
    const doc = (await raw(server.port, 'GET', '/openapi.json', { host: `127.0.0.1:${server.port}` })).body;
    expect(Object.keys(doc.paths['/sessions'].post.responses)).toEqual(expect.arrayContaining(['403', '415']));
    expect(Object.keys(doc.paths['/sessions'].get.responses)).toContain('403');
    expect(Object.keys(doc.paths['/sessions'].get.responses)).not.toContain('415');
  });
});

describe('steward serve: what it shows of requests and of its store', () => {
  it('logs a request path with escape sequences, CR/LF and an OSC title as inert text', async () => {
    class FailingStore extends MemoryStore {
      override async load(): Promise<never> {
        throw new Error('disk on fire');
      }
    }
    const { server, logged } = await serveOn({ store: new FailingStore() });
    // ESC ] 0 ; title BEL (window title), CR LF + a forged line, ESC [ 2 J (clear screen).
    const hostile = 'x\u001b]0;pwned\u0007\r\nserve: forged line\u001b[2J\u009b';
    const refused = await raw(server.port, 'GET', `/sessions/${encodeURIComponent(hostile)}`, { host: `127.0.0.1:${server.port}` });
    // Such an id breaks the id rule: refused before any store (or log line) sees it.
    expect(refused.status).toBe(400);
    // A route that fails logs its method and path, as inert text on one line.
    const failing = `/sessions/${encodeURIComponent('x ]0;pwned serve: forged line')}`;
    const res = await raw(server.port, 'GET', failing, { host: `127.0.0.1:${server.port}` });
    expect(res.status).toBe(500);
    const line = logged.find((l) => l.includes('disk on fire'));
    expect(line).toBeDefined();
    expect(line!.split('\n')[0]).toMatch(/^serve: GET \/sessions\/x (%20|\s)?\]0(;|%3B)pwned serve(:|%3A) forged line failed: Error: disk on fire$/);
    // eslint-disable-next-line no-control-regex
    for (const l of logged) expect(l).not.toMatch(/[\u001b\u0007\r\u009b]/);
  });

  it('/healthz shows the kind of store, never its location', async () => {
    const file = tmp.path('secret-place.db');
    const store = new SqliteStore(file);
    try {
      const { server } = await serveOn({ store, storeLabel: file });
      const health = await raw(server.port, 'GET', '/healthz', { host: `127.0.0.1:${server.port}` });
      expect(health.body).toEqual({ ok: true, store: 'sqlite', draining: false, storeBusy: false });
    } finally {
      await Promise.all(open.splice(0).map((s) => s.close()));
      await store.close();
    }
  });

  it('a store locked by another process: 503 "locked, retry" without the file to the client, the file in the log', async () => {
    const file = tmp.path('locked-place.db');
    const store = new SqliteStore(file, { busyTimeoutMs: 100 });
    const holder = { kill: () => {} } as { kill(signal: NodeJS.Signals): void };
    try {
      const { server, logged } = await serveOn({ store });
      const host = `127.0.0.1:${server.port}`;
      const id: string = (await raw(server.port, 'POST', '/sessions', { host, ...json }, createBody)).body.view.id;
      const locker = spawn(process.execPath, [join(root, 'test/support/lock-holder.mjs'), file, 'write'], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
      holder.kill = (signal) => locker.kill(signal);
      let out = '';
      locker.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
      await until(() => out.includes('locked'), 'the lock holder');

      // An open write transaction elsewhere: every write here waits its busy timeout, then fails.
      const answers = [
        await raw(server.port, 'POST', '/sessions', { host, ...json }, createBody),
        await raw(server.port, 'POST', `/sessions/${id}/events`, { host, ...json }, JSON.stringify({ type: 'user_submitted_input', text: 'Hello' })),
      ];
      for (const answer of answers) {
        expect(answer.status, JSON.stringify(answer.body)).toBe(503);
        expect(answer.body.error).toMatchObject({ code: 'store_locked', message: expect.stringMatching(/locked by another process.*retry/) });
        expect(JSON.stringify(answer.body)).not.toContain('locked-place');
      }
      expect(logged.join('\n')).toContain(file);
    } finally {
      holder.kill('SIGKILL');
      await Promise.all(open.splice(0).map((s) => s.close()));
      await store.close();
    }
  });
});
