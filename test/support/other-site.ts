/**
 * A page of another site, on 127.0.0.1: what a browser test opens to see what a page that is
 * not Steward's can do against it (read a session, post a decision).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Serves `html` (a function: read at each request) at every path; resolves with its origin and what stops it. */
export async function startOtherSite(html: () => string): Promise<{ origin: string; close: () => Promise<void> }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(html());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
