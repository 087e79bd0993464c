/**
 * Steward's local inspector: a hono app on @hono/node-server, listening on 127.0.0.1, that
 * serves the inspector page (built by Vite into dist/inspector) and a JSON API behind a
 * random token. The API, a hono sub-app under /api, mounts serve's route modules for the
 * sessions list, a new session and the journal, and one module per route of its own under
 * ./routes (docs/design.md, "The inspector's API"); the guards (./routes/security.ts) sit in
 * front of all of them:
 *
 * - loopback only: any other listen address is refused before the server starts;
 * - requests whose Host is not this server's (DNS rebinding), or that come from another
 *   site's page (Origin), get 403; a body that is not JSON gets 415 (src/http/security.ts);
 * - every /api request needs the token (header `x-steward-token`, or `?token=` on the
 *   inspector's own routes: serve's strict query schemas refuse it), reads included: 403
 *   otherwise. The page's URL carries the token; share it like a password;
 * - request bodies are 1 MB at most (413);
 * - every answer carries nosniff, no-referrer and a cache policy.
 *
 * @example
 * const runtime = createRuntime({ model: new DemoModel(), store });
 * const inspector = await startInspector({ runtime, store, port: 0 });
 * console.log(`Inspector: ${inspector.url}`);
 * // …
 * await inspector.close();
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { stewardRoot } from '../package-root.js';
import { createAdaptorServer } from '@hono/node-server';
import { OpenAPIHono } from '@hono/zod-openapi';
import { Hono } from 'hono';
import type { BlankEnv } from 'hono/types';
import { UserError } from '../core/errors.js';
import { ManualModel } from '../models/manual-model.js';
import type { Runtime } from '../runtime/runtime.js';
import type { SessionStore } from '../store/session-store.js';
import { machineGraph } from './graph.js';
import { LiveHub } from './live-hub.js';
import { JournalReplayer } from './replay.js';
import { errorHandler, HttpError } from '../http/errors.js';
import type { InspectorContext } from './routes/context.js';
import { eventsRoute } from './routes/events.js';
import { infoRoute } from './routes/info.js';
import { modelRoutes } from './routes/model.js';
import { pageRoute } from './routes/page.js';
import { resumeRoute } from './routes/resume.js';
import { forkRoute } from './routes/fork.js';
import { apiGuards, inspectorGuards, isLoopback, securityHeaders } from './routes/security.js';
import { safeText } from '../text/safe-text.js';
import { sessionRoute } from './routes/session.js';
import { liveRoute } from './routes/live.js';
import { mountRoutes, refuseInvalid, type RouteModule } from '../http/route.js';
import type { ServeDeps, ServeRoute } from '../serve/route.js';
import { createSession } from '../serve/routes/create-session.js';
import { journal } from '../serve/routes/journal.js';
import { listSessions } from '../serve/routes/list-sessions.js';
import { StreamTickets } from '../http/stream-tickets.js';
import { SessionAccess } from '../http/access.js';
import { SessionHost } from '../serve/session-host.js';
import { leaseOwnerName } from '../store/lease-keeper.js';
import { layoutRoutes } from './routes/layouts.js';
import { KeptLayouts } from './kept-layouts.js';
import { streamRoute } from './routes/stream.js';
import { timeTravelRoute } from './routes/time-travel.js';

export interface InspectorOptions {
  runtime: Runtime;
  store: SessionStore;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0: a free port. */
  port?: number;
  /** The session the page opens first. */
  sessionId?: string;
  /** Default: 24 random bytes, hex. */
  token?: string;
  /** Where the built page lives (default: dist/inspector of this package). */
  pageDir?: string;
  /** Where server-side problems are reported (default: console.error). */
  log?: (msg: string) => void;
  /**
   * A folder where the page's laid-out charts are kept (one small JSON file each, at most 200),
   * so a page draws a chart laid out before at once instead of running ELK (seconds of CPU on
   * each load). Inspectors given the same folder share them. Default: none kept.
   */
  layoutsDir?: string;
}

export interface InspectorHandle {
  /** The page's address, token included. */
  url: string;
  token: string;
  close(): Promise<void>;
}

/** dist/inspector of Steward's package, from the sources (tsx), dist/ or the bundled command line. */
export function defaultPageDir(): string {
  return join(stewardRoot(import.meta.url), 'dist', 'inspector');
}

/**
 * The routes of `steward serve` the inspector mounts as they are: the sessions list (paged),
 * a new session, the journal (paged). The rest of its API is its own; docs/design.md §
 * "The inspector's API" says why each differs.
 */
const SERVE_ROUTES: readonly ServeRoute[] = [listSessions, createSession, journal];

/** The inspector's own routes. */
const INSPECTOR_ROUTES: readonly RouteModule<InspectorContext>[] = [
  infoRoute,
  streamRoute,
  liveRoute,
  sessionRoute,
  timeTravelRoute,
  eventsRoute,
  resumeRoute,
  forkRoute,
  ...modelRoutes,
  ...layoutRoutes,
];

/**
 * What the inspector's routes share for one runtime and store: its manual model (if it plays
 * one), the chart's graph, the journal replayer and the live hub (close it with `ctx.hub.close()`).
 *
 * @example
 * const ctx = inspectorContext(runtime, store, console.error);
 * const api = inspectorApi(ctx, token, console.error);
 */
export function inspectorContext(
  runtime: Runtime,
  store: SessionStore,
  log: (msg: string) => void,
  sessionId: string | null = null,
  layoutsDir: string | null = null,
): InspectorContext {
  const manual = runtime.model instanceof ManualModel ? runtime.model : null;
  const hub = new LiveHub(runtime, store, manual, (error) => log(`inspector: ${error instanceof Error ? error.message : String(error)}`));
  const layouts = layoutsDir ? new KeptLayouts(layoutsDir) : null;
  return { runtime, store, manual, graph: machineGraph(runtime.machine), replayer: new JournalReplayer(runtime), hub, inFlight: new Set(), sessionId, layouts };
}

/**
 * The JSON API under /api: the token and the size limit, then serve's shared routes and the
 * inspector's own, each validated by its declaration (a request that breaks it: the one 400).
 */
export function inspectorApi(ctx: InspectorContext, token: string, log: (msg: string) => void): OpenAPIHono<BlankEnv> {
  const api = new OpenAPIHono<BlankEnv>({ defaultHook: refuseInvalid() });
  api.use('*', ...apiGuards(token));
  const deps: ServeDeps = {
    runtime: ctx.runtime,
    store: ctx.store,
    // Serve's routes reach sessions through a host; the ones mounted here only create one (and let it go: the first send resumes it here).
    host: new SessionHost(ctx.runtime, ctx.store, { log, owner: leaseOwnerName('steward inspect') }),
    storeLabel: '',
    streams: new Set(),
    auth: true,
    // No mounted route opens a stream; were one added, its tickets would be signed with the inspector's token.
    tickets: StreamTickets.forTokens({ kind: 'shared', token }),
    createLimit: null,
    // The page's token is an administrator's (apiGuards sets its caller): every session, as the default rule has it.
    access: new SessionAccess(ctx.store),
    log,
  };
  mountRoutes(api, SERVE_ROUTES, deps);
  mountRoutes(api, INSPECTOR_ROUTES, ctx);
  api.all('*', (c) => {
    throw new HttpError(404, 'not_found', `No API route ${c.req.method} ${c.req.path}.`);
  });
  return api;
}

/** The inspector's app: the guards, then the API, then the page; failures in the one error shape. */
function inspectorApp(
  ctx: InspectorContext,
  options: { token: string; pageDir: string; listening: () => { host: string; port: number } | undefined; log: (msg: string) => void },
): Hono {
  const app = new Hono();
  app.onError(errorHandler('inspector', options.log));
  app.use('*', securityHeaders, inspectorGuards(options.listening));
  app.route('/api', inspectorApi(ctx, options.token, options.log));
  pageRoute(app, options.pageDir);
  app.all('*', (c) => {
    throw new HttpError(405, 'method_not_allowed', `${c.req.method} is not allowed on ${c.req.path}.`);
  });
  return app;
}

/** Starts the inspector; rejects with a clear error when the page has not been built. */
export async function startInspector(options: InspectorOptions): Promise<InspectorHandle> {
  const { runtime, store } = options;
  const host = options.host ?? '127.0.0.1';
  // The page can send events and play the model: it is for this machine only.
  if (!isLoopback(host)) throw new UserError(`The inspector listens on this machine only: use 127.0.0.1, localhost or ::1, not "${host}".`);
  const token = options.token ?? randomBytes(24).toString('hex');
  const write = options.log ?? ((msg: string) => console.error(msg));
  // What a log line quotes may come from a request: nothing in it reaches the terminal raw.
  const log = (msg: string) => write(safeText(msg));
  const pageDir = resolve(options.pageDir ?? defaultPageDir());
  const indexFile = join(pageDir, 'index.html');
  if (!existsSync(indexFile)) {
    throw new UserError(`The inspector page is not built (${indexFile} is missing): run "npm run build" (npm install runs it too).`);
  }
  const ctx = inspectorContext(runtime, store, log, options.sessionId ?? null, options.layoutsDir ? resolve(options.layoutsDir) : null);
  const { hub } = ctx;

  let listening: { host: string; port: number } | undefined;
  const app = inspectorApp(ctx, { token, pageDir, listening: () => listening, log });
  // overrideGlobalObjects: false leaves the host app's global Request / Response alone
  // (@hono/node-server would otherwise replace them with its own for the whole process).
  const server = createAdaptorServer({ fetch: app.fetch, hostname: host, overrideGlobalObjects: false }) as Server;
  server.keepAliveTimeout = 2_000;

  await new Promise<void>((resolveListen, rejectListen) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      hub.close(); // its timers and listeners would otherwise outlive the failed start
      rejectListen(
        error.code === 'EADDRINUSE' ? new UserError(`Port ${options.port} on ${host} is in use: pick another with --port, or 0 for any free port.`) : error,
      );
    });
    server.listen(options.port ?? 0, host, () => resolveListen());
  });
  const { port } = server.address() as AddressInfo;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  listening = { host, port };
  const query = new URLSearchParams({ token, ...(options.sessionId ? { session: options.sessionId } : {}) });

  return {
    url: `http://${urlHost}:${port}/?${query}`,
    token,
    async close() {
      hub.close();
      await Promise.race([Promise.allSettled([...ctx.inFlight]), new Promise((r) => setTimeout(r, 100).unref())]);
      await new Promise<void>((resolveClose) => {
        server.close(() => resolveClose());
        server.closeAllConnections();
      });
    },
  };
}
