/**
 * `steward/serve`: the HTTP API of `steward serve` in an app's own process (REST + Server-Sent
 * Events, OpenAPI from the zod schemas, bearer token). Its own entry so that hono is loaded
 * only by apps that serve.
 *
 * @example
 * import { createRuntime } from 'steward';
 * import { startServe } from 'steward/serve';
 * const server = await startServe({ runtime, store, port: 4800, token: process.env.STEWARD_TOKEN });
 * // or named tokens: `by` is then the token's name
 * const named = await startServe({ runtime, store, tokens: parseTokenList(text, 'my token list') });
 * // or inside an app's own hono server, beside its routes:
 * app.route('/steward', createServeApp({ runtime, store, auth: { token: process.env.STEWARD_TOKEN! } }).app);
 */
import { startServe as start, type ServeHandle, type ServeOptions } from './serve/server.js';

export {
  DEFAULT_GRACE_MS,
  DEFAULT_LEASE_MS,
  DEFAULT_MAX_CREATES_PER_MINUTE,
  DEFAULT_MAX_REPLAY_MB,
  DEFAULT_MAX_STREAMS_PER_CALLER,
  DEFAULT_SERVE_PORT,
} from './serve/server.js';
// Named tokens (`startServe({ tokens })`): read them as `steward serve` does.
export { parseTokenList, tokensFromEnv, TokenListError, type NamedToken, type ServeTokens } from './http/tokens.js';
export type { ServeHandle, ServeOptions };
// Steward's routes inside an app's own hono server, with the app's own auth.
export { createServeApp, type ServeApp, type ServeAppOptions } from './serve/embed.js';
export type { Authenticate, Caller } from './http/auth.js';
// Who may see and decide which session: the default rule, and the types of an app's own (`access`).
export { ADMIN_GROUP, type AccessAction, type AccessRule, type AccessSession } from './http/access.js';
export { STREAM_TICKET_TTL_MS } from './http/stream-tickets.js';
// Decision links (`startServe({ linkSecret })`): read the secret as `steward serve` does.
export { linkSecretFromEnv } from './http/decision-links.js';
// Decision links in webhook messages, for the named tokens in a wait's groups (createRuntime({ webhookLinks })).
export { webhookLinksFor } from './serve/webhook-links.js';
export { decisionLinkFn, type DecisionLinkFn } from './serve/decision-link.js';
export { DecisionLinks } from './http/decision-links.js';
export type { RecipientLink, WaitToLink, WebhookLinks } from './webhooks/links.js';
// The webhook outbox's deliverer, for an app that runs one without startServe.
export { RETRY_SCHEDULE_MS, WebhookDeliverer, type DelivererOptions } from './webhooks/deliverer.js';

/**
 * Serves `runtime`'s sessions over HTTP until `close()`: every route, the event stream and
 * `/openapi.json`. Off a loopback address a token (`token` or `tokens`) is required.
 *
 * @example
 * const server = await startServe({ runtime, store, host: '127.0.0.1', port: 0, token: process.env.STEWARD_TOKEN });
 * console.log(`Serving on ${server.url}`);
 * const { settled, handedBack } = await server.close(); // graceful: running sessions are saved
 */
export function startServe(options: ServeOptions): Promise<ServeHandle> {
  return start(options);
}
