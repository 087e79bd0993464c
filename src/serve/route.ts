/**
 * What a route module of `steward serve` provides: its OpenAPI description (built from the
 * same zod schemas it validates with) and `mount`, which adds its handler to the app.
 */
import type { Context, Hono } from 'hono';
import type { z } from 'zod';
import type { Runtime } from '../runtime/runtime.js';
import type { SessionStore } from '../store/session-store.js';
import type { RateLimiter } from '../http/rate-limit.js';
import { HttpError, parseOr400 } from '../http/errors.js';
import { SESSION_ID_RULE, sessionIdProblem } from '../ids.js';
import type { StreamTickets } from '../http/stream-tickets.js';
import type { StreamSlots } from '../http/stream-slots.js';
import type { SessionHost } from './session-host.js';

export interface ServeDeps {
  runtime: Runtime;
  store: SessionStore;
  host: SessionHost;
  /** The store as it may be printed (no password). */
  storeLabel: string;
  /** Open event streams, ended at shutdown. */
  streams: Set<{ close(): void }>;
  /** Every route, for /openapi.json. */
  routes: readonly RouteModule[];
  /** Whether requests need a credential (a bearer token, or the embedding app's own). */
  auth: boolean;
  /** Signs and checks stream tickets. */
  tickets: StreamTickets;
  /**
   * The URL clients reach these routes at, for discovery documents (the A2A card): the
   * configured public URL, else the listening address; undefined (or absent): not known.
   */
  publicUrl?: () => string | undefined;
  /** Sessions each caller may create per minute, by every route that creates one (create-limit.ts); null: no limit. */
  createLimit: RateLimiter | null;
  /** Streams each caller may hold open (src/http/stream-slots.ts); null or absent: no limit. */
  streamSlots?: StreamSlots | null;
  log: (message: string) => void;
}

export interface RouteDoc {
  method: 'get' | 'post';
  /** OpenAPI form: /sessions/{id}. */
  path: string;
  summary: string;
  /** Open without the token (health checks, the API document). */
  public?: boolean;
  /** Opened by a stream ticket (`?ticket=`) instead of the bearer token, too. */
  ticketed?: boolean;
  body?: z.ZodType;
  query?: z.ZodObject;
  /** Request headers the route reads, by name. */
  headers?: Record<string, string>;
  /** `headers`: response headers it sets, by name. */
  responses: Record<number, { description: string; schema?: z.ZodType; contentType?: string; headers?: Record<string, string> }>;
}

export interface RouteModule {
  doc: RouteDoc;
  mount(app: Hono, deps: ServeDeps): void;
}

/**
 * Mounts route modules on an app with the given deps: `steward serve` mounts all of them,
 * the inspector those whose shapes it shares (src/inspect/server.ts).
 *
 * @example
 * mountRoutes(app, [listSessions, journal], deps);
 */
export function mountRoutes(app: Hono, modules: readonly RouteModule[], deps: ServeDeps): void {
  for (const route of modules) route.mount(app, deps);
}

/** The query string parsed with the route's schema (an unknown parameter is a 400 too). */
export function query<S extends z.ZodObject>(c: Context, schema: S): z.output<S> {
  return parseOr400(schema, c.req.query(), 'query');
}

/** A session id from the path, checked by the id rule (src/ids.ts), so it never reaches the store unchecked. */
export function sessionId(c: Context): string {
  const id = c.req.param('id') ?? '';
  const problem = sessionIdProblem(id);
  if (problem)
    throw new HttpError(400, 'invalid_request', `Bad session id in the path: ${problem}, but ${SESSION_ID_RULE}.`, [{ path: 'id', message: problem }]);
  return id;
}
