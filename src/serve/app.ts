/**
 * The `steward serve` HTTP app (hono): middleware in the order a request meets it —
 * Host / Origin / content-type guards (src/http/security.ts), shutdown gate, bearer token,
 * body size limit — then one module per route, and one JSON shape for every failure.
 */
import { Hono } from 'hono';
import { tokenAuth } from '../http/auth.js';
import type { NamedToken, ServeTokens } from '../http/tokens.js';
import { requestGuards, type RequestGuardOptions } from '../http/security.js';
import { limitBody } from '../http/body.js';
import { errorHandler, errorResponse, HttpError } from '../http/errors.js';
import { safeLine } from '../text/safe-text.js';
import type { RouteModule, ServeDeps } from './route.js';
import { createSession } from './routes/create-session.js';
import { getSession } from './routes/get-session.js';
import { healthz } from './routes/healthz.js';
import { journal } from './routes/journal.js';
import { listSessions } from './routes/list-sessions.js';
import { openapi } from './routes/openapi.js';
import { sendEvent } from './routes/send-event.js';
import { stream } from './routes/stream.js';
import { agUiRoutes } from '../protocols/ag-ui/route.js';
import { a2aRoutes } from '../protocols/a2a/route.js';

export const routes: readonly RouteModule[] = [
  healthz,
  openapi,
  createSession,
  listSessions,
  getSession,
  sendEvent,
  journal,
  stream,
  ...agUiRoutes,
  ...a2aRoutes,
];

export const DEFAULT_MAX_BODY_BYTES = 256 * 1024;

export interface AppOptions extends Omit<ServeDeps, 'routes' | 'auth' | 'streams'> {
  /** Required as `Authorization: Bearer …` on every route but the public ones; none: no auth. */
  token?: string;
  /** Named tokens instead of `token`: the caller's name is known (see src/http/tokens.ts). */
  tokens?: readonly NamedToken[];
  maxBodyBytes?: number;
  streams?: ServeDeps['streams'];
  /** Where the server listens, once it does: the Host a request must name (until then: 403). */
  listening: RequestGuardOptions['listening'];
  /** More Host names clients may use (`--allow-host`). */
  allowedHosts?: readonly string[];
  /** Origins whose web pages may call the API; none by default. */
  allowedOrigins?: readonly string[];
}

export function createServeApp(options: AppOptions): { app: Hono; deps: ServeDeps } {
  const deps: ServeDeps = { ...options, streams: options.streams ?? new Set(), routes, auth: options.token !== undefined || options.tokens !== undefined };
  const app = new Hono();
  const publicPaths = new Set(routes.filter((r) => r.doc.public).map((r) => r.doc.path));

  app.onError(errorHandler('serve', options.log));
  app.notFound((c) =>
    errorResponse(c, new HttpError(404, 'not_found', `No route ${safeLine(c.req.method)} ${safeLine(c.req.path)}. The API is described at GET /openapi.json.`)),
  );

  app.use(
    '*',
    requestGuards({
      listening: options.listening,
      ...(options.allowedHosts ? { allowedHosts: options.allowedHosts } : {}),
      ...(options.allowedOrigins ? { allowedOrigins: options.allowedOrigins } : {}),
      hostFix: (name) => `start serve with --allow-host ${name} (startServe: allowedHosts)`,
      originFix: "Call the API from a program (it sends no Origin), or list the page's origin in startServe's allowedOrigins.",
    }),
  );

  app.use('*', async (c, next) => {
    if (options.host.isDraining && c.req.path !== '/healthz') {
      c.header('connection', 'close');
      return errorResponse(
        c,
        new HttpError(503, 'server_stopping', 'This server is shutting down and takes no new work: send the request to another server, or retry in a moment.'),
      );
    }
    return next();
  });

  const tokens: ServeTokens = options.tokens
    ? { kind: 'named', tokens: options.tokens }
    : options.token !== undefined
      ? { kind: 'shared', token: options.token }
      : { kind: 'none' };
  const auth = tokenAuth(tokens, (path) => publicPaths.has(path));
  if (auth) app.use('*', auth);

  app.use('*', limitBody(options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES));

  for (const route of routes) route.mount(app, deps);
  return { app, deps };
}
