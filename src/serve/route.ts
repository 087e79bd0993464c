/**
 * What the route modules of `steward serve` share: the dependencies they are made from, the
 * path parameter every session route has, and what a declaration's `security` says. Each
 * module declares its route once with @hono/zod-openapi (src/http/route.ts): the app
 * registers, validates and documents it from that declaration.
 */
import * as z from 'zod';
import type { Runtime } from '../runtime/runtime.js';
import type { SessionStore } from '../store/session-store.js';
import type { RateLimiter } from '../http/rate-limit.js';
import type { RouteModule } from '../http/route.js';
import { SESSION_ID_MAX_CHARS, SESSION_ID_RULE, sessionIdProblem } from '../ids.js';
import type { StreamTickets } from '../http/stream-tickets.js';
import type { StreamSlots } from '../http/stream-slots.js';
import type { SessionHost } from './session-host.js';
import type { DecisionLinks } from '../http/decision-links.js';
import type { DecisionLinkFn } from './decision-link.js';
import type { SessionAccess } from '../http/access.js';
import type { Caller } from '../http/auth.js';
import type { McpEndpoint } from '../protocols/mcp/route.js';

export interface ServeDeps {
  runtime: Runtime;
  store: SessionStore;
  host: SessionHost;
  /** The store as it may be printed (no password). */
  storeLabel: string;
  /** Open event streams, ended at shutdown. */
  streams: Set<{ close(): void }>;
  /** Whether requests need a credential (a bearer token, or the embedding app's own). */
  auth: boolean;
  /** Signs and checks stream tickets. */
  tickets: StreamTickets;
  /**
   * The URL clients reach these routes at, for discovery documents (the A2A card): the
   * configured public URL, else the listening address; undefined (or absent): not known.
   */
  publicUrl?: () => string | undefined;
  /** Signs and checks decision links; null: the server makes none (no link secret). */
  links?: DecisionLinks | null;
  /** A decision link's URL for one wait of one session (decision-link.ts), for the routes that hand links out; null: links are off. */
  decisionLink?: DecisionLinkFn | null;
  /** Sessions each caller may create per minute, by every route that creates one (create-limit.ts); null: no limit. */
  createLimit: RateLimiter | null;
  /** Streams each caller may hold open (src/http/stream-slots.ts); null or absent: no limit. */
  streamSlots?: StreamSlots | null;
  /** Who may see and decide which session (src/http/access.ts): every route that touches one asks it. */
  access: SessionAccess;
  /** `/mcp` (src/protocols/mcp/route.ts); none: an app that serves no MCP (the inspector's API). */
  mcp?: McpEndpoint;
  log: (message: string) => void;
}

/** A route of `steward serve`: its declaration and how it mounts with serve's dependencies. */
export type ServeRoute = RouteModule<ServeDeps>;

/**
 * The `security` of a declaration, which the app's auth middleware follows too (app.ts):
 * `PUBLIC` routes need no credential (health checks, the API document, the agent card),
 * `TICKETED` ones take a stream ticket (`?ticket=`) instead of the bearer token; every other
 * route declares `BEARER`.
 */
type Security = { [scheme: string]: string[] }[];
export const PUBLIC: Security = [];
export const BEARER: Security = [{ bearer: [] }];
export const TICKETED: Security = [{ bearer: [] }, { streamTicket: [] }];

/**
 * The owner of a session `caller` creates (a new session, a fork, a new AG-UI thread or A2A
 * context): a named caller's name; null for one that names no one (the shared token, no tokens).
 */
export const ownerOf = (caller: Caller | undefined): string | null => (caller?.named ? caller.name : null);

/** Whether a declaration's `security` lets a request in without a credential. */
export const isPublic = (security: readonly object[] | undefined): boolean => security !== undefined && security.length === 0;

/** Whether a declaration's `security` takes a stream ticket. */
export const isTicketed = (security: readonly object[] | undefined): boolean => (security ?? []).some((s) => 'streamTicket' in s);

/** The session id in the path, checked by the id rule (src/ids.ts), so it never reaches the store unchecked. */
export const SessionIdParams = z.object({
  id: z
    .string()
    .check((ctx) => {
      const problem = sessionIdProblem(ctx.value);
      if (problem) ctx.issues.push({ code: 'custom', input: ctx.value, message: `${problem}, but ${SESSION_ID_RULE}` });
    })
    .meta({ description: SESSION_ID_RULE, minLength: 1, maxLength: SESSION_ID_MAX_CHARS }),
});
