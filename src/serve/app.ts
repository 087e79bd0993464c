/**
 * The `steward serve` HTTP app (hono): middleware in the order a request meets it —
 * Host / Origin / content-type guards (src/http/security.ts), CORS for the listed origins
 * (src/http/cors.ts), shutdown gate, authentication (bearer token, a stream's ticket, or the
 * embedding app's own check), body size limit — then one module per route, each declared
 * once with @hono/zod-openapi (src/http/route.ts), and one JSON shape for every failure (a
 * request that breaks a route's schema too: `refuseInvalid`). Public routes and the ticketed
 * stream are the ones whose declared `security` says so, marked by their route pattern, so
 * the marks hold when an app mounts this app under a prefix.
 */
import { OpenAPIHono } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { BlankEnv } from 'hono/types';
import { callerAuth, type ServeAuth } from '../http/auth.js';
import { SessionAccess, type AccessRule } from '../http/access.js';
import { corsFor } from '../http/cors.js';
import { parseOrigins, requestGuards, type RequestGuardOptions } from '../http/security.js';
import { limitBody } from '../http/body.js';
import { errorHandler, errorResponse, HttpError } from '../http/errors.js';
import { StreamTickets } from '../http/stream-tickets.js';
import { safeLine } from '../text/safe-text.js';
import { mountRoutes, refuseInvalid } from '../http/route.js';
import { isPublic, isTicketed, type ServeDeps, type ServeRoute } from './route.js';
import { createSession } from './routes/create-session.js';
import { forkSession } from './routes/fork-session.js';
import { getSession } from './routes/get-session.js';
import { healthz } from './routes/healthz.js';
import { audit } from './routes/audit.js';
import { journal } from './routes/journal.js';
import { listSessions } from './routes/list-sessions.js';
import { openapi } from './routes/openapi.js';
import { sendEvent } from './routes/send-event.js';
import { stream } from './routes/stream.js';
import { agUiRoutes } from '../protocols/ag-ui/route.js';
import { a2aRoutes } from '../protocols/a2a/route.js';
import { McpEndpoint, mcpRoutes } from '../protocols/mcp/route.js';
import { RequestStates } from '../protocols/mcp/request-state.js';
import { streamTickets } from './routes/stream-tickets.js';
import { createLink } from './routes/create-link.js';
import { decideByLink, openLink } from './routes/open-link.js';
import { decisionLinkFn } from './decision-link.js';
import type { DecisionLinks } from '../http/decision-links.js';

export const routes: readonly ServeRoute[] = [
  healthz,
  openapi,
  createSession,
  listSessions,
  getSession,
  sendEvent,
  forkSession,
  journal,
  audit,
  streamTickets,
  stream,
  createLink,
  openLink,
  decideByLink,
  ...agUiRoutes,
  ...a2aRoutes,
  ...mcpRoutes,
];

export const DEFAULT_MAX_BODY_BYTES = 256 * 1024;

export interface AppOptions extends Omit<ServeDeps, 'auth' | 'streams' | 'tickets' | 'links' | 'decisionLink' | 'access'> {
  /** Who may call: bearer tokens (`steward serve`), the embedding app's own check, or anyone. */
  auth: ServeAuth;
  /** The app's own rule of who may see and decide which session; default: owner, participants and `admin` (src/http/access.ts). */
  access?: AccessRule;
  /** Signs the stream tickets; default: a key derived from `auth`'s tokens (see src/http/stream-tickets.ts). */
  tickets?: StreamTickets;
  /** Signs the request states of MCP calls that wait for a person; default: a key derived from `auth`'s tokens (src/http/signed-claims.ts). */
  requestStates?: RequestStates;
  maxBodyBytes?: number;
  streams?: ServeDeps['streams'];
  /** Signs decision links (src/http/decision-links.ts); none: the server makes none. */
  links?: DecisionLinks;
  /** Where the server listens, once it does: the Host a request must name (until then: 403). None: see RequestGuardOptions. */
  listening?: RequestGuardOptions['listening'];
  /** More Host names clients may use (`--allow-host`). */
  allowedHosts?: readonly string[];
  /** Origins whose web pages may call the API (CORS, `--cors-origin`); none by default. */
  corsOrigins?: readonly string[];
}

/** Hono's form of an OpenAPI path: /sessions/{id} → /sessions/:id. */
const honoPath = (path: string) => path.replace(/\{(\w+)\}/g, ':$1');

export function buildServeApp(options: AppOptions): { app: OpenAPIHono<BlankEnv>; deps: ServeDeps } {
  const tickets = options.tickets ?? StreamTickets.forTokens(options.auth.kind === 'tokens' ? options.auth.tokens : { kind: 'none' });
  const links = options.links ?? null;
  const { access: rule, requestStates, ...rest } = options;
  const deps: ServeDeps = {
    ...rest,
    streams: options.streams ?? new Set(),
    auth: options.auth.kind !== 'none',
    tickets,
    links,
    decisionLink: links ? decisionLinkFn(links, options.publicUrl ?? (() => undefined)) : null,
    access: new SessionAccess(options.store, rule),
  };
  deps.mcp = new McpEndpoint(deps, requestStates ?? RequestStates.forTokens(options.auth.kind === 'tokens' ? options.auth.tokens : { kind: 'none' }));
  const app = new OpenAPIHono<BlankEnv>({ defaultHook: refuseInvalid() });
  const origins = parseOrigins(options.corsOrigins);

  // Before the guards: a route declared with a form body takes one (the content-type guard asks).
  for (const { route } of routes) if (takesForm(route)) app.use(honoPath(route.path), markForm(route.method.toUpperCase()));

  app.onError(errorHandler('serve', options.log));
  app.notFound((c) =>
    errorResponse(c, new HttpError(404, 'not_found', `No route ${safeLine(c.req.method)} ${safeLine(c.req.path)}. The API is described at GET /openapi.json.`)),
  );

  app.use(
    '*',
    requestGuards({
      ...(options.listening ? { listening: options.listening } : {}),
      ...(options.allowedHosts ? { allowedHosts: options.allowedHosts } : {}),
      // The server's own origin behind a proxy (its public URL): a decision link's page posts from there.
      allowedOrigins: [...origins, ...publicOrigin(options.publicUrl?.())],
      hostFix: (name) => `start serve with --allow-host ${name} (startServe: allowedHosts)`,
      originFix: "Call the API from a program (it sends no Origin), or list the page's origin with --cors-origin (startServe: corsOrigins).",
    }),
  );
  // After the guards: a preflight from a refused origin gets their 403, never a 204.
  const cors = corsFor(origins);
  if (cors) app.use('*', cors);

  app.use('*', async (c, next) => {
    if (options.host.isDraining && !c.req.path.endsWith('/healthz')) {
      c.header('connection', 'close');
      return errorResponse(
        c,
        new HttpError(503, 'server_stopping', 'This server is shutting down and takes no new work: send the request to another server, or retry in a moment.'),
      );
    }
    return next();
  });

  for (const { route } of routes) {
    const method = route.method.toUpperCase();
    if (isPublic(route.security)) app.use(honoPath(route.path), markPublic(method));
    if (isTicketed(route.security) && deps.auth) app.use(honoPath(route.path), ticketAuth(method, tickets));
  }
  const auth = callerAuth(options.auth);
  if (auth) app.use('*', auth);

  app.use('*', limitBody(options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES));

  mountRoutes(app, routes, deps);
  return { app, deps };
}

/** The origin of a public URL (none: not configured, or not known until the server listens, when it is the listening address anyway). */
const publicOrigin = (url: string | undefined): string[] => (url ? [new URL(url).origin] : []);

/** Whether a declaration takes a URL-encoded form body. */
const takesForm = (route: ServeRoute['route']): boolean => route.request?.body?.content['application/x-www-form-urlencoded'] !== undefined;

function markForm(method: string): MiddlewareHandler {
  return async (c, next) => {
    if (c.req.method === method) c.set('takesForm', true);
    await next();
  };
}

/** A public route (health, the API document, the agent card): no credential needed, for HEAD as for GET (load balancers probe with HEAD). */
function markPublic(method: string): MiddlewareHandler {
  return async (c, next) => {
    if (c.req.method === method || (method === 'GET' && c.req.method === 'HEAD')) c.set('passedBy', 'public');
    await next();
  };
}

/** A stream opened with `?ticket=` and no Authorization header: the ticket is the credential (a wrong one: 401). */
function ticketAuth(method: string, tickets: StreamTickets): MiddlewareHandler {
  return async (c, next) => {
    const ticket = c.req.query('ticket');
    if (c.req.method === method && ticket !== undefined && c.req.header('authorization') === undefined) {
      c.set('caller', tickets.verify(ticket, c.req.param('id') ?? ''));
      c.set('passedBy', 'ticket');
    }
    await next();
  };
}
