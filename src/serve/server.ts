/**
 * `startServe`: the HTTP API on 127.0.0.1 by default (@hono/node-server on Node's http),
 * and its graceful shutdown: stop listening, answer 503 to requests on open connections,
 * let running sends settle for `graceMs`, stop the rest (they stay saved and resume
 * elsewhere), end the event streams, close the connections.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { UserError } from '../core/errors.js';
import type { Runtime } from '../runtime/runtime.js';
import { WebhookDeliverer } from '../webhooks/deliverer.js';
import type { SessionStore } from '../store/session-store.js';
import { buildServeApp } from './app.js';
import { SessionHost } from './session-host.js';
import { checkNamedTokens, checkSharedToken, checkTokenNamesAgainstWorkers, type NamedToken } from '../http/tokens.js';
import { checkedAccessRule, type AccessRule } from '../http/access.js';

import {
  DEFAULT_GRACE_MS,
  DEFAULT_LEASE_MS,
  DEFAULT_MAX_CREATES_PER_MINUTE,
  DEFAULT_MAX_REPLAY_MB,
  DEFAULT_MAX_STREAMS_PER_CALLER,
  DEFAULT_SERVE_PORT,
} from './defaults.js';
import { isLoopback } from '../http/security.js';
import { safeText } from '../text/safe-text.js';
import { serveLimits } from './serve-limits.js';
import { parsePublicUrl } from './public-url.js';
import { DecisionLinks } from '../http/decision-links.js';

const bracketed = (address: string) => (address.includes(':') ? `[${address}]` : address);

export { DEFAULT_GRACE_MS, DEFAULT_LEASE_MS, DEFAULT_MAX_CREATES_PER_MINUTE, DEFAULT_MAX_REPLAY_MB, DEFAULT_MAX_STREAMS_PER_CALLER, DEFAULT_SERVE_PORT };

export interface ServeOptions {
  runtime: Runtime;
  store: SessionStore;
  /** Default 127.0.0.1. Any other address needs a token. */
  host?: string;
  /** Default 4800; 0 picks a free port. */
  port?: number;
  /** One shared bearer token (STEWARD_TOKEN): `by` stays a claim. This or `tokens` is required unless the host is a loopback address. */
  token?: string;
  /** Named bearer tokens (STEWARD_TOKENS, STEWARD_TOKENS_FILE; see `tokensFromEnv`): `by` is the token's name, verified; `groups` put the caller in groups. */
  tokens?: readonly NamedToken[];
  /**
   * Who may see and decide which session, replacing the default rule (the owner, the
   * participants by name or `group:NAME`, and the `admin` group; a caller that names no one,
   * the shared token's, sees every session): see `createServeApp`'s `access` and src/http/access.ts.
   */
  access?: AccessRule;
  maxBodyBytes?: number;
  /** How long shutdown waits for sends under way (default 10 s). */
  graceMs?: number;
  /** Lease length on stores with leases (PostgreSQL; default 30 s): a dead server's sessions are taken over this long after. */
  leaseMs?: number;
  /** Sessions this server runs at once, at most (default 0: no limit); a send beyond it answers 429 with Retry-After. */
  maxRunning?: number;
  /** Sessions this server keeps loaded while they wait for a person, on PostgreSQL (default 1,000; 0: none): the next send to one skips the statement that leases and loads it. */
  keepLoaded?: number;
  /** Sessions one caller may create per minute, by any route (POST /sessions, forks, new AG-UI threads and A2A contexts; a burst of as many, refilled evenly); default 120; 0: no limit. Beyond it: 429 with Retry-After. */
  maxCreatesPerMinute?: number;
  /**
   * Streams one caller may hold open at once — session streams, AG-UI runs, A2A streams (default 100; 0: no limit).
   * Beyond it: 429 `too_many_streams` (on AG-UI a RUN_ERROR, on A2A a JSON-RPC error).
   */
  maxStreamsPerCaller?: number;
  /**
   * Bytes of live events kept for replay, all sessions together (default 64 MB): past it the least
   * recently used session's go (each session keeps at most 5,000 events, 1 MB, anyway).
   */
  maxReplayBytes?: number;
  /** The store as it may be printed (no password). */
  storeLabel?: string;
  /**
   * The URL clients reach this server at (`--public-url`: a proxy's, a DNS name, a path
   * prefix), for discovery documents (the A2A agent card); default: the listening address.
   */
  publicUrl?: string;
  /**
   * More Host names clients reach this server by (a reverse proxy's, a DNS name): `name`
   * (any port) or `name:port`. The listening address is always allowed; any other Host: 403.
   */
  allowedHosts?: string[];
  /**
   * Origins (`scheme://host[:port]`) whose web pages may call the API from a browser
   * (`--cors-origin`): they pass the Origin guard and get CORS answers. None by default;
   * every other origin is refused (403).
   */
  corsOrigins?: string[];
  /**
   * The secret that signs decision links (`STEWARD_LINK_SECRET`, at least 32 bytes): with it,
   * `POST /sessions/{id}/links` makes links people open in a browser to decide a wait; without
   * it, links are off. Servers of one store that share it take each other's links.
   */
  linkSecret?: string;
  /**
   * Whether this server delivers the webhook outbox of the runtime's receivers
   * (`createRuntime({ webhooks })`; default true): it claims due messages, so several servers
   * on one database share the work. False when the app runs its own `WebhookDeliverer`.
   */
  deliverWebhooks?: boolean;
  /** How long a webhook receiver has to answer (default 15 s); a message whose server died mid-POST is sent again about twice that later. */
  webhookTimeoutMs?: number;
  log?: (message: string) => void;
}

export interface ServeHandle {
  url: string;
  port: number;
  host: SessionHost;
  /** Graceful shutdown; resolves with what happened to the sessions under way. */
  close(): Promise<{ settled: number; handedBack: string[] }>;
}

// One loopback check for the inspector and the server (both refuse a public bind without a token).
export { isLoopback };

export async function startServe(options: ServeOptions): Promise<ServeHandle> {
  const hostname = options.host ?? '127.0.0.1';
  const token = options.token?.trim() || undefined;
  if (token && options.tokens) throw new UserError('startServe got both `token` and `tokens`: give one (named tokens, or one shared STEWARD_TOKEN).');
  const tokens = options.tokens ? checkNamedTokens(options.tokens, 'The named tokens (STEWARD_TOKENS)') : undefined;
  if (tokens) checkTokenNamesAgainstWorkers(tokens, options.runtime.packages.values());
  if (!token && !tokens && !isLoopback(hostname)) {
    throw new UserError(
      `steward serve on ${hostname} is reachable from other machines: set STEWARD_TOKEN to a long random ` +
        `secret, or STEWARD_TOKENS_FILE / STEWARD_TOKENS to named tokens (clients send "Authorization: ` +
        `Bearer <token>"), or bind to 127.0.0.1.`,
    );
  }
  if (token) checkSharedToken(token);
  const access = checkedAccessRule(options.access, 'startServe');
  const limits = serveLimits(options, 'startServe');
  const write = options.log ?? ((message: string) => process.stderr.write(`${message}\n`));
  // What a log line quotes may come from a request: nothing in it reaches the terminal raw.
  const log = (message: string) => write(safeText(message));
  const publicUrl = options.publicUrl === undefined ? undefined : parsePublicUrl(options.publicUrl, 'startServe publicUrl (--public-url)');
  const links = options.linkSecret !== undefined ? new DecisionLinks(options.linkSecret) : undefined;
  const maxRunning = options.maxRunning ?? 0;
  if (!Number.isInteger(maxRunning) || maxRunning < 0)
    throw new UserError(`maxRunning must be a whole number ≥ 0 (0: no limit), got ${String(options.maxRunning)}.`);
  const host = new SessionHost(options.runtime, options.store, {
    log,
    maxRunning,
    replay: limits.replay,
    ...(options.leaseMs !== undefined ? { leaseMs: options.leaseMs } : {}),
    ...(options.keepLoaded !== undefined ? { keepLoaded: options.keepLoaded } : {}),
  });
  let listening: { host: string; port: number } | undefined;
  // Known once listening: what discovery documents name without a --public-url.
  let listeningUrl: string | undefined;
  const { app, deps } = buildServeApp({
    runtime: options.runtime,
    store: options.store,
    host,
    storeLabel: options.storeLabel ?? 'store',
    createLimit: limits.createLimit,
    streamSlots: limits.streamSlots,
    log,
    listening: () => listening,
    publicUrl: () => publicUrl ?? listeningUrl,
    ...(options.allowedHosts ? { allowedHosts: options.allowedHosts } : {}),
    ...(options.corsOrigins ? { corsOrigins: options.corsOrigins } : {}),
    auth: tokens ? { kind: 'tokens', tokens: { kind: 'named', tokens } } : token ? { kind: 'tokens', tokens: { kind: 'shared', token } } : { kind: 'none' },
    ...(access ? { access } : {}),
    ...(options.maxBodyBytes !== undefined ? { maxBodyBytes: options.maxBodyBytes } : {}),
    ...(links ? { links } : {}),
  });

  const server = await new Promise<Server>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, hostname, port: options.port ?? DEFAULT_SERVE_PORT }, () => resolve(s as Server)) as Server;
    s.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        error.code === 'EADDRINUSE' ? new UserError(`Port ${options.port} on ${hostname} is in use: pick another with --port (0: any free port).`) : error,
      );
    });
  });
  const { port } = server.address() as AddressInfo;
  listening = { host: hostname, port };
  const url = `http://${bracketed(hostname)}:${port}`;
  listeningUrl = url;
  // Several servers on one database: adopt the running sessions of servers that died.
  host.startTakeover();
  // Waits whose deadline passed while nobody held them (the sessions this server keeps loaded arm no timer while parked).
  host.startDeadlines();
  const webhooks = options.runtime.webhooks;
  const outbox = options.store.outbox;
  const deliverer =
    webhooks.length && outbox && options.deliverWebhooks !== false
      ? new WebhookDeliverer({
          outbox,
          receivers: webhooks,
          log,
          ...(options.webhookTimeoutMs !== undefined ? { requestTimeoutMs: options.webhookTimeoutMs } : {}),
        })
      : null;
  await deliverer?.start();

  let closing: Promise<{ settled: number; handedBack: string[] }> | null = null;
  const close = () =>
    (closing ??= (async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const report = await host.drain(options.graceMs ?? DEFAULT_GRACE_MS);
      // After the drain: what the last sends wrote is sent now, or by the next server to start.
      await deliverer?.stop();
      for (const stream of [...deps.streams]) stream.close();
      server.closeIdleConnections();
      // Whatever still hangs (a client that never reads) is cut after a short wait.
      const cut = setTimeout(() => server.closeAllConnections(), 1000);
      await closed;
      clearTimeout(cut);
      return report;
    })());

  return { url, port, host, close };
}
