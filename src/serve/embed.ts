/**
 * `createServeApp`: Steward's HTTP routes as a hono app that an app mounts beside its own
 * (`app.route('/steward', steward.app)`), in the app's own server and with its own auth.
 * The same app as `steward serve` (./app.ts), without the listening socket: the Host guard
 * takes only `allowedHosts` (none: the Host is the app's business), and `close()` drains
 * the sessions under way as `steward serve` does at shutdown.
 */
import type { Hono } from 'hono';
import { UserError } from '../core/errors.js';
import type { Authenticate, ServeAuth } from '../http/auth.js';
import { checkedAccessRule, type AccessRule } from '../http/access.js';
import { StreamTickets } from '../http/stream-tickets.js';
import { RequestStates } from '../protocols/mcp/request-state.js';
import { checkNamedTokens, checkSharedToken, checkTokenNamesAgainstWorkers, type NamedToken } from '../http/tokens.js';
import type { Runtime } from '../runtime/runtime.js';
import type { SessionStore } from '../store/session-store.js';
import { safeText } from '../text/safe-text.js';
import { buildServeApp } from './app.js';
import { DEFAULT_GRACE_MS } from './defaults.js';
import { serveLimits } from './serve-limits.js';
import { SessionHost } from './session-host.js';
import { parsePublicUrl } from './public-url.js';
import { DecisionLinks } from '../http/decision-links.js';

export interface ServeAppOptions {
  runtime: Runtime;
  store: SessionStore;
  /**
   * Who may call, said explicitly: `{ token }` or `{ tokens }` (as `steward serve`),
   * `{ authenticate(c) }` (the app's own check: return the caller, or undefined for 401), or
   * `'none'` (the app's middleware in front of these routes checks every request).
   */
  auth: 'none' | { token: string } | { tokens: readonly NamedToken[] } | { authenticate: Authenticate };
  /**
   * Who may see and decide which session, for an app with its own notion of users: asked with
   * the caller (`authenticate`'s), the session (`id`, `packageId`, `owner`, `participants`) and
   * the action (`read`: its view, journal, stream, a fork of it; `decide`: an event sent to it),
   * on every route, lists included. Default: the owner, the participants (by name or
   * `group:NAME`) and the `admin` group; a caller that names no one sees every session.
   * A caller who may not read a session gets the 404 of an unknown id; one who may read but not
   * decide, a 403 `decide_not_allowed`.
   */
  access?: AccessRule;
  /**
   * Signs stream tickets and the request states of MCP calls (servers that share it take each
   * other's); default: derived from the tokens, or random with `authenticate`.
   */
  ticketSecret?: string;
  /** Origins whose pages may call from a browser (CORS); none by default. */
  corsOrigins?: readonly string[];
  /**
   * The URL these routes are reached at, mount path included (e.g. https://example.com/steward),
   * for discovery documents (the A2A agent card; without it the card is not served).
   */
  publicUrl?: string;
  /** Host names the requests must name (DNS-rebinding guard); none: not checked here. */
  allowedHosts?: readonly string[];
  maxBodyBytes?: number;
  /** Sessions one caller may create per minute, by any route that creates one (default 120; 0: no limit). */
  maxCreatesPerMinute?: number;
  /** Streams one caller may hold open at once (default 100; 0: no limit): session streams, AG-UI runs, A2A streams. */
  maxStreamsPerCaller?: number;
  /** Bytes of live events kept for replay, all sessions together (default 64 MB). */
  maxReplayBytes?: number;
  /**
   * The secret that signs decision links (at least 32 bytes): links people open in a browser
   * to decide a wait (`POST /sessions/{id}/links`). Needs `publicUrl`, which the links name.
   */
  linkSecret?: string;
  /** Lease length on stores with leases (PostgreSQL). */
  leaseMs?: number;
  log?: (message: string) => void;
}

export interface ServeApp {
  /** Mount it: `app.route('/steward', serveApp.app)`. */
  app: Hono;
  /** Graceful stop: sends under way get `graceMs` (default 10 s), the rest stay saved and resume elsewhere; open streams end. */
  close(graceMs?: number): Promise<{ settled: number; handedBack: string[] }>;
}

/**
 * Steward's routes as a hono sub-app, for an app that serves its own routes too.
 *
 * @example
 * import { Hono } from 'hono';
 * import { createServeApp } from 'steward/serve';
 * const steward = createServeApp({
 *   runtime,
 *   store,
 *   auth: { authenticate: (c) => (c.get('user') ? { name: c.get('user'), named: true, actForOthers: false, groups: c.get('teams') } : undefined) },
 *   // Optional: anyone signed in reads every session, only its owner decides it (default: owner, participants, admin).
 *   access: (caller, session, action) => action === 'read' || session.owner === caller?.name,
 * });
 * const app = new Hono();
 * app.get('/', (c) => c.text('my app'));
 * app.route('/steward', steward.app); // POST /steward/sessions, GET /steward/sessions/:id/stream, …
 */
export function createServeApp(options: ServeAppOptions): ServeApp {
  const auth = serveAuth(options.auth, options.runtime);
  const access = checkedAccessRule(options.access, 'createServeApp');
  const limits = serveLimits(options, 'createServeApp');
  const write = options.log ?? ((message: string) => process.stderr.write(`${message}\n`));
  const log = (message: string) => write(safeText(message));
  const publicUrl = options.publicUrl === undefined ? undefined : parsePublicUrl(options.publicUrl, 'createServeApp publicUrl');
  if (options.linkSecret !== undefined && publicUrl === undefined)
    throw new UserError(
      'createServeApp: linkSecret needs publicUrl, the URL these routes are reached at (e.g. https://example.com/steward): the links name it.',
    );
  const links = options.linkSecret !== undefined ? new DecisionLinks(options.linkSecret) : undefined;
  const host = new SessionHost(options.runtime, options.store, {
    log,
    replay: limits.replay,
    ...(options.leaseMs !== undefined ? { leaseMs: options.leaseMs } : {}),
  });
  const { app, deps } = buildServeApp({
    runtime: options.runtime,
    store: options.store,
    host,
    storeLabel: 'store',
    createLimit: limits.createLimit,
    streamSlots: limits.streamSlots,
    log,
    auth,
    ...(access ? { access } : {}),
    publicUrl: () => publicUrl,
    tickets: StreamTickets.forTokens(auth.kind === 'tokens' ? auth.tokens : { kind: 'none' }, {
      ...(options.ticketSecret !== undefined ? { secret: options.ticketSecret } : {}),
    }),
    requestStates: RequestStates.forTokens(auth.kind === 'tokens' ? auth.tokens : { kind: 'none' }, options.ticketSecret),
    ...(options.allowedHosts ? { allowedHosts: options.allowedHosts } : {}),
    ...(options.corsOrigins ? { corsOrigins: options.corsOrigins } : {}),
    ...(options.maxBodyBytes !== undefined ? { maxBodyBytes: options.maxBodyBytes } : {}),
    ...(links ? { links } : {}),
  });
  host.startTakeover();
  let closing: ReturnType<ServeApp['close']> | null = null;
  const close = (graceMs = DEFAULT_GRACE_MS) =>
    (closing ??= (async () => {
      const report = await host.drain(graceMs);
      for (const stream of [...deps.streams]) stream.close();
      return report;
    })());
  return { app, close };
}

function serveAuth(auth: ServeAppOptions['auth'], runtime: Runtime): ServeAuth {
  if (auth === 'none') return { kind: 'none' };
  if ('authenticate' in auth) {
    if (typeof auth.authenticate !== 'function') throw new UserError('createServeApp: auth.authenticate must be a function (c) => caller | undefined.');
    return { kind: 'custom', authenticate: auth.authenticate };
  }
  if ('tokens' in auth) {
    const tokens = checkNamedTokens(auth.tokens, 'createServeApp auth.tokens');
    checkTokenNamesAgainstWorkers(tokens, runtime.packages.values());
    return { kind: 'tokens', tokens: { kind: 'named', tokens } };
  }
  const token = auth.token?.trim() ?? '';
  checkSharedToken(token);
  return { kind: 'tokens', tokens: { kind: 'shared', token } };
}
