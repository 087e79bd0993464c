/**
 * The inspector's guards, in front of every route: the Host must be this server's (no DNS
 * rebinding), every /api request carries the token (reads included), bodies are 1 MB at
 * most, and every failure answers JSON `{ ok: false, error: { code, message } }`.
 */
import { timingSafeEqual } from 'node:crypto';
import type { Context, Hono, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { StewardError } from '../../errors.js';
import { HttpError, MAX_BODY } from './context.js';

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

function sameToken(given: string | undefined, token: string): boolean {
  if (!given) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Refuses a Host other than this server's addresses (filled in once it listens). */
export function hostCheck(allowedHosts: () => ReadonlySet<string>): MiddlewareHandler {
  return async (c, next) => {
    const host = c.req.header('host') ?? '';
    if (!allowedHosts().has(host.toLowerCase())) {
      throw new HttpError(403, `Host "${host}" is not this inspector; open it at its 127.0.0.1 address.`, 'forbidden_host');
    }
    await next();
  };
}

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
    log(`inspector: ${c.req.method} ${c.req.path} failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}`);
    return errorJson(c, 500, 'internal_error', error instanceof Error ? error.message : String(error));
  });
}
