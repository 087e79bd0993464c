/**
 * The inspector's guards, in front of every route: the Host / Origin / content-type checks
 * it shares with `steward serve` (src/http/security.ts: no DNS rebinding, no other site's
 * page, JSON bodies only), every /api request carries the token (reads included), bodies
 * are 1 MB at most, every answer carries the security headers, and every failure answers
 * JSON `{ ok: false, error: { code, message } }`.
 */
import { timingSafeEqual } from 'node:crypto';
import type { Context, Hono, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { StewardError } from '../../errors.js';
import { isLoopback, requestGuards, type RequestGuardOptions } from '../../http/security.js';
import { safeLine } from '../../text/safe-text.js';
import { HttpError, MAX_BODY } from './context.js';

export { isLoopback };

function sameToken(given: string | undefined, token: string): boolean {
  if (!given) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Refuses a Host other than this server's addresses, another site's page, and bodies that are not JSON. */
export function inspectorGuards(listening: RequestGuardOptions['listening']): MiddlewareHandler {
  return requestGuards({
    listening,
    hostFix: () => 'open the inspector at the 127.0.0.1 address `steward inspect` printed',
    originFix: 'Open the inspector at the address `steward inspect` printed; only its own page may call it.',
    refuse: ({ status, code, message }) => new HttpError(status, message, code),
  });
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

/** Every API request needs the token: header `x-steward-token` or `?token=`. */
export function tokenCheck(token: string): MiddlewareHandler {
  return async (c, next) => {
    const given = c.req.header('x-steward-token') ?? c.req.query('token');
    if (!sameToken(given, token)) throw new HttpError(403, 'Missing or wrong inspector token: open the URL printed by `steward inspect` (it carries ?token=…).', 'forbidden');
    await next();
  };
}

export const limitBody: MiddlewareHandler = bodyLimit({
  maxSize: MAX_BODY,
  onError: () => {
    throw new HttpError(413, `Request body too large (${MAX_BODY / 1_000_000} MB at most).`, 'body_too_large');
  },
});

function errorJson(c: Context, status: number, code: string, message: string): Response {
  c.header('cache-control', 'no-store');
  return c.json({ ok: false, error: { code, message } }, status as 400);
}

/** Typed errors become their status; Steward's own errors a 4xx; anything else a logged 500. */
export function handleErrors(app: Hono, log: (msg: string) => void): void {
  app.onError((error, c) => {
    if (error instanceof HttpError) return errorJson(c, error.status, error.code, error.message);
    if (StewardError.isStewardError(error)) {
      const status = error.code === 'session_not_found' ? 404 : error.code === 'conflict' ? 409 : 400;
      return errorJson(c, status, error.code, error.message);
    }
    log(`inspector: ${safeLine(c.req.method)} ${safeLine(c.req.path)} failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}`);
    return errorJson(c, 500, 'internal_error', error instanceof Error ? error.message : String(error));
  });
}
