/**
 * A web page's own server for browser tests of steward/client: it serves the page's files
 * (a folder, or files in memory) and forwards `/api/*` to a `steward serve`, so the page
 * calls the API from its own origin. The forwarded request names the server's Host (its
 * guard wants its own address); the page's Origin goes along, which the server must list in
 * its allowedOrigins (or `dropOrigin`). A page on another origin with CORS needs no such proxy.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize } from 'node:path';

const types: Record<string, string> = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css' };

export interface PageServer {
  url: string;
  origin: string;
  close(): Promise<void>;
}

/** Serves `files` (path → content) or the folder `dir`; `/api/…` goes to `api` (once set: the server may start after the page's origin is known). */
export async function pageServer(
  source: { dir: string } | { files: Record<string, string> },
  api: () => string | undefined,
  options: { dropOrigin?: boolean } = {},
): Promise<PageServer> {
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const target = api();
    if (url.pathname.startsWith('/api/') && target) {
      const to = new URL(url.pathname.slice(4) + url.search, target);
      const { origin: _origin, ...rest } = req.headers;
      // dropOrigin: for a server that cannot be told the page's origin (one started without --cors-origin).
      const headers = { ...(options.dropOrigin ? rest : req.headers), host: to.host };
      const forwarded = httpRequest(to, { method: req.method, headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      forwarded.on('error', () => res.writeHead(502).end());
      res.on('close', () => forwarded.destroy());
      req.pipe(forwarded);
      return;
    }
    const path = normalize(decodeURIComponent(url.pathname)).replace(/^(\.\.[/\\])+/, '');
    const name = path.endsWith('/') ? `${path}index.html` : path;
    if ('files' in source) {
      const body = source.files[name];
      if (body === undefined) return void res.writeHead(404).end();
      return void res.writeHead(200, { 'content-type': types[extname(name)] ?? 'application/octet-stream' }).end(body);
    }
    const file = join(source.dir, name);
    if (!file.startsWith(source.dir) || !existsSync(file)) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': types[extname(file)] ?? 'application/octet-stream' }).end(readFileSync(file));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${origin}/`,
    origin,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
