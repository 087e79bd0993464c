/**
 * The built inspector page (dist/inspector), served by @hono/node-server's serveStatic: it
 * refuses `..`, doubled slashes and backslashes. A path without an extension gets the page
 * (it reads ?token and ?session itself); a missing file with one is a 404. The page carries
 * no data, so it needs no token.
 */
import { serveStatic } from '@hono/node-server/serve-static';
import type { Hono } from 'hono';
import { extname } from 'node:path';
import { HttpError } from '../../http/errors.js';

export function pageRoute(app: Hono, pageDir: string): void {
  // Its headers (cache policy, nosniff, no referrer) are set for every answer by securityHeaders.
  const page = serveStatic({ root: pageDir, path: 'index.html' });
  app.get('*', serveStatic({ root: pageDir }));
  app.get('*', async (c, next) => {
    if (extname(c.req.path)) throw new HttpError(404, 'not_found', `No file ${c.req.path}.`);
    return page(c, next);
  });
}
