/**
 * The fetch the OpenAI client is given (node-http-fetch.ts), against real servers on
 * 127.0.0.1: what it answers must be what the built-in fetch answers, and what it does not
 * take must go to the built-in fetch.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { nodeHttpFetch, type NodeHttpFetch } from '../../src/models/node-http-fetch.js';

const opened: Array<{ server: Server; sockets: Set<Socket> }> = [];
const fetches: NodeHttpFetch[] = [];
afterEach(async () => {
  for (const f of fetches.splice(0)) f.close();
  await Promise.all(
    opened.splice(0).map(
      ({ server, sockets }) =>
        new Promise<void>((resolve) => {
          for (const socket of sockets) socket.destroy();
          server.close(() => resolve());
        }),
    ),
  );
});

/** A server on a free port; counts the connections it was opened with. */
async function serve(handle: (req: IncomingMessage, res: ServerResponse, body: string) => void): Promise<{ url: string; connections: () => number }> {
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (part: string) => (body += part));
    req.on('end', () => handle(req, res, body));
  });
  server.on('connection', (socket: Socket) => {
    connections += 1;
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  opened.push({ server, sockets });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, connections: () => connections };
}

function made(fallback?: typeof fetch): NodeHttpFetch {
  const f = nodeHttpFetch(fallback);
  fetches.push(f);
  return f;
}

/** A fallback that says it was used and answers 299, so a test sees which path answered. */
function recordingFallback(): { fetch: typeof fetch; calls: unknown[] } {
  const calls: unknown[] = [];
  return {
    calls,
    fetch: async (input) => {
      calls.push(input);
      return new Response('from the fallback', { status: 299 });
    },
  };
}

describe('nodeHttpFetch', () => {
  it('sends the method, headers and body, and answers with the status, headers and body', async () => {
    const seen: Array<{ method?: string; type?: string; length?: string; body: string }> = [];
    const server = await serve((req, res, body) => {
      seen.push({ method: req.method, type: req.headers['content-type'], length: req.headers['content-length'], body });
      res.writeHead(201, 'Made', { 'content-type': 'application/json', 'x-request-id': 'req_1' });
      res.end('{"ok":true}');
    });
    const body = JSON.stringify({ text: 'é ü' });
    const response = await made().fetch(`${server.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect(response.status).toBe(201);
    expect(response.statusText).toBe('Made');
    expect(response.headers.get('x-request-id')).toBe('req_1');
    expect(await response.json()).toEqual({ ok: true });
    expect(seen).toEqual([{ method: 'POST', type: 'application/json', length: String(Buffer.byteLength(body)), body }]);
  });

  it('keeps the connection for the next request', async () => {
    const server = await serve((_req, res) => res.end('x'));
    const f = made();
    for (let i = 0; i < 3; i++) expect(await (await f.fetch(`${server.url}/`)).text()).toBe('x');
    expect(server.connections()).toBe(1);
  });

  it('decodes a gzip body as fetch does', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200, { 'content-encoding': 'gzip', 'content-type': 'application/json' });
      res.end(gzipSync('{"compressed":true}'));
    });
    expect(await (await made().fetch(`${server.url}/`)).json()).toEqual({ compressed: true });
  });

  it('answers a 204 with no body', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(204);
      res.end();
    });
    const response = await made().fetch(`${server.url}/`, { method: 'DELETE' });
    expect(response.status).toBe(204);
    expect(response.body).toBeNull();
  });

  it('leaves a redirect to the built-in fetch, which follows it', async () => {
    const server = await serve((req, res, body) => {
      if (req.url === '/old') {
        res.writeHead(307, { location: '/new' });
        res.end();
        return;
      }
      res.end(`${req.method} ${req.url} ${body}`);
    });
    const response = await made().fetch(`${server.url}/old`, { method: 'POST', body: 'payload' });
    expect(await response.text()).toBe('POST /new payload');
  });

  it('leaves a body it does not take, another scheme, a manual redirect and credentials in the URL to the fallback', async () => {
    const server = await serve((_req, res) => res.end('from node:http'));
    const fallback = recordingFallback();
    const f = made(fallback.fetch);
    const stream = new ReadableStream({ start: (c) => c.close() });
    expect((await f.fetch(`${server.url}/`, { method: 'POST', body: stream, duplex: 'half' } as RequestInit)).status).toBe(299);
    expect((await f.fetch(`${server.url}/`, { method: 'POST', body: new URLSearchParams({ a: '1' }) })).status).toBe(299);
    expect((await f.fetch('data:text/plain,hi')).status).toBe(299);
    expect((await f.fetch(`${server.url}/`, { redirect: 'manual' })).status).toBe(299);
    expect((await f.fetch(server.url.replace('http://', 'http://user:secret@'))).status).toBe(299);
    expect(fallback.calls).toHaveLength(5);
    expect(await (await f.fetch(new URL(`${server.url}/`))).text()).toBe('from node:http');
    expect(fallback.calls).toHaveLength(5);
  });

  it('fails as fetch fails: a TypeError with the system error as its cause', async () => {
    const server = await serve((_req, res) => res.end());
    const port = new URL(server.url).port;
    await new Promise<void>((resolve) => opened.pop()!.server.close(() => resolve()));
    const error = (await made()
      .fetch(`http://127.0.0.1:${port}/`)
      .catch((e: unknown) => e)) as TypeError & { cause?: { code?: string } };
    expect(error).toBeInstanceOf(TypeError);
    expect(error.message).toBe('fetch failed');
    expect(error.cause?.code).toBe('ECONNREFUSED');
  });

  it('an abort before the answer rejects with an AbortError', async () => {
    const server = await serve(() => {});
    const controller = new AbortController();
    const pending = made().fetch(`${server.url}/`, { signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    expect(((await pending.catch((e: unknown) => e)) as Error).name).toBe('AbortError');
    // As fetch: an abort's own reason, and a signal aborted already sends nothing.
    const stopped = new AbortController();
    stopped.abort(new Error('session stopped'));
    const before = server.connections();
    await expect(made().fetch(`${server.url}/`, { signal: stopped.signal })).rejects.toThrow('session stopped');
    expect(server.connections()).toBe(before);
  });

  it('an abort while the body streams ends the read with an error, and a cut connection too, compressed or not', async () => {
    const server = await serve((req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: one\n\n');
      if (req.url === '/cut') setTimeout(() => res.destroy(), 20);
    });
    const zipped = gzipSync('data: two\n\n'.repeat(2000));
    const gzipServer = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' });
      res.write(zipped.subarray(0, zipped.length >> 1));
      setTimeout(() => res.destroy(), 20);
    });
    const controller = new AbortController();
    const f = made();
    const response = await f.fetch(`${server.url}/`, { signal: controller.signal });
    const reader = response.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('data: one\n\n');
    controller.abort();
    expect(((await reader.read().catch((e: unknown) => e)) as Error).name).toBe('AbortError');
    const cut = (await f.fetch(`${server.url}/cut`)).body!.getReader();
    await cut.read();
    await expect(cut.read()).rejects.toThrow();
    // Cut inside a gzip body: the decoder is told, so the read fails instead of waiting forever.
    const unzipped = (await f.fetch(`${gzipServer.url}/`)).body!.getReader();
    await expect(
      (async () => {
        for (;;) if ((await unzipped.read()).done) return 'ended';
      })(),
    ).rejects.toThrow();
  });
});
