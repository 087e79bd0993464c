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
 */
export * from './serve/server.js';
// Named tokens (`startServe({ tokens })`): read them as `steward serve` does.
export { parseTokenList, tokensFromEnv, TokenListError, type NamedToken, type ServeTokens } from './http/tokens.js';
