/** Defaults of `steward serve`, apart from the server so the CLI can show them without loading hono. */
export const DEFAULT_SERVE_PORT = 4800;
/** How long a graceful shutdown waits for sends under way. */
export const DEFAULT_GRACE_MS = 10_000;
/** How long a server's lease on a session lasts without renewal: the store's default, the one every runner uses. */
export { DEFAULT_LEASE_MS } from '../store/lease-keeper.js';
/** Sessions one caller (one bearer token; everyone, without a token) may create per minute; 0: no limit. */
export const DEFAULT_MAX_CREATES_PER_MINUTE = 120;
/** Streams one caller may hold open at once (session streams, AG-UI runs, A2A streams); 0: no limit. */
export const DEFAULT_MAX_STREAMS_PER_CALLER = 100;
/** Megabytes (1,000,000 bytes) of live events a server keeps for replay, all sessions together. */
export const DEFAULT_MAX_REPLAY_MB = 64;
/**
 * Sessions a server on PostgreSQL keeps loaded while they wait for a person (held-sessions.ts):
 * the next send to one of them skips the statement that leases and loads it. 0 turns it off.
 */
export const DEFAULT_KEEP_LOADED = 1_000;
