/**
 * CORS for `steward serve`: the pages of the origins the operator listed (`--cors-origin`,
 * `startServe({ corsOrigins })`) may call the API from a browser. The Origin guard
 * (./security.ts) runs first and refuses every other origin (403), so this only answers
 * for listed ones: the preflight (204) and the headers a page needs to read an answer.
 * hono's own `cors` middleware does the work; this file holds the policy.
 *
 * No cookies are used (a page sends its bearer token or a stream ticket), so there is no
 * `Access-Control-Allow-Credentials`: a page's ambient credentials never reach the API.
 */
import type { MiddlewareHandler } from 'hono';
import { cors } from 'hono/cors';
import { normalizeOrigin } from './security.js';

/**
 * The request headers a page may send: auth, JSON, SSE resume, async send, idempotency, who
 * acted, the A2A protocol version, MCP's Streamable HTTP headers (its version, session, method and name).
 */
export const CORS_ALLOWED_HEADERS = [
  'authorization',
  'content-type',
  'last-event-id',
  'prefer',
  'idempotency-key',
  'x-steward-user',
  'a2a-version',
  'mcp-protocol-version',
  'mcp-session-id',
  'mcp-method',
  'mcp-name',
] as const;
/** The response headers a page may read besides the simple ones: a 429's wait, an applied `Prefer`, an MCP session's id. */
export const CORS_EXPOSED_HEADERS = ['retry-after', 'preference-applied', 'mcp-session-id'] as const;
/** DELETE: an MCP session ended by its host. */
export const CORS_METHODS = ['GET', 'POST', 'DELETE', 'OPTIONS'] as const;
/** How long a browser may cache a preflight (seconds). */
export const CORS_MAX_AGE_SECONDS = 600;

/**
 * The CORS middleware for `origins` (normalized by `parseOrigins`); undefined when none is listed.
 *
 * @example
 * const mw = corsFor(parseOrigins(['http://localhost:5173']));
 * if (mw) app.use('*', mw); // after the Origin guard
 */
export function corsFor(origins: ReadonlySet<string>): MiddlewareHandler | undefined {
  if (origins.size === 0) return undefined;
  return cors({
    // The page's own spelling of its origin back, when it is listed; nothing otherwise.
    origin: (origin) => (origin && origins.has(normalizeOrigin(origin)) ? origin : null),
    allowMethods: [...CORS_METHODS],
    allowHeaders: [...CORS_ALLOWED_HEADERS],
    exposeHeaders: [...CORS_EXPOSED_HEADERS],
    maxAge: CORS_MAX_AGE_SECONDS,
    credentials: false,
  });
}
