/**
 * The inspector's guards, in front of every route: the Host / Origin / content-type checks
 * it shares with `steward serve` (src/http/security.ts: no DNS rebinding, no other site's
 * page, JSON bodies only), every /api request carries the token (reads included, see
 * src/http/auth.ts), bodies are 1 MB at most, and every answer carries the security headers.
 * Failures answer the one error shape of src/http/errors.ts.
 */
import type { MiddlewareHandler } from 'hono';
import { pageTokenAuth, type Caller } from '../../http/auth.js';
import { ADMIN_GROUP } from '../../http/access.js';
import { limitBody } from '../../http/body.js';
import { isLoopback, requestGuards, type RequestGuardOptions } from '../../http/security.js';

export { isLoopback };

/** Request bodies are small JSON documents (events, model replies): 1 MB at most. */
export const MAX_BODY = 1_000_000;

/** Refuses a Host other than this server's addresses, another site's page, and bodies that are not JSON. */
export function inspectorGuards(listening: RequestGuardOptions['listening']): MiddlewareHandler {
  return requestGuards({
    listening,
    hostFix: () => 'open the inspector at the 127.0.0.1 address `steward inspect` printed',
    originFix: 'Open the inspector at the address `steward inspect` printed; only its own page may call it.',
  });
}

/**
 * Who the page's token is to serve's routes the inspector mounts (src/http/access.ts): the one
 * person at this machine, an administrator who sees and decides every session. It names no
 * one (`named: false`), so a session it creates has no owner, as one the CLI creates.
 */
const PAGE_TOKEN_CALLER: Caller = Object.freeze({ name: 'inspector', named: false, actForOthers: true, groups: Object.freeze([ADMIN_GROUP]) });

/** What every /api request passes: the token (header `x-steward-token` or `?token=`), then the size limit; the caller is then the page's. */
export function apiGuards(token: string): MiddlewareHandler[] {
  const asPageCaller: MiddlewareHandler = async (c, next) => {
    c.set('caller', PAGE_TOKEN_CALLER);
    await next();
  };
  return [pageTokenAuth(token, 'open the URL printed by `steward inspect` (it carries ?token=…)'), asPageCaller, limitBody(MAX_BODY)];
}

/**
 * On every answer (page, assets, API, errors): no MIME sniffing, no Referer (the page's URL
 * carries the token), and a cache policy: the API and the page are never reused stale
 * (no-store, no-cache); the built assets, whose names carry their hash, are cached.
 * Set after the route answered: serveStatic builds its response before any hook could add to it.
 */
export const securityHeaders: MiddlewareHandler = async (c, next) => {
  await next();
  const html = (c.res.headers.get('content-type') ?? '').startsWith('text/html');
  const cache = c.req.path.startsWith('/api') || c.res.status >= 400 ? 'no-store' : html ? 'no-cache' : 'public, max-age=3600';
  c.res.headers.set('cache-control', cache);
  c.res.headers.set('x-content-type-options', 'nosniff');
  c.res.headers.set('referrer-policy', 'no-referrer');
};
