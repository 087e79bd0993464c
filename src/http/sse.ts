/**
 * The mechanics both servers' Server-Sent Events streams share. `steward serve` streams a
 * session's journal entries and live events (src/serve/routes/stream.ts); the inspector
 * tells its page *that* something changed (src/inspect/live-hub.ts). Both hear of writes the
 * same way — the store's `watch` where it has one (PostgreSQL LISTEN/NOTIFY: at once, from
 * any process), else a poll (SQLite, memory) — and keep idle connections open alike.
 */
import type { SessionStore } from '../store/session-store.js';

/** How often a store without `watch` is looked at. */
export const POLL_MS = 250;
/** An idle stream sends a comment this often, so proxies and browsers keep it open. */
export const HEARTBEAT_MS = 15_000;
/** The reconnect delay a stream asks its EventSource for (`retry:`). */
export const RETRY_MS = 1_000;
/** The keep-alive comment. */
export const KEEP_ALIVE = ': ping\n\n';

export interface StoreWatchOptions {
  /** Only this session's writes (a store may still report others). */
  sessionId?: string;
  onError?: (error: unknown) => void;
  /** When the store's watch cannot be set up: poll instead (true) or fail (false, the default). */
  pollIfWatchFails?: boolean;
}

/**
 * Calls `onChange` after writes to the store: through its `watch`, else every POLL_MS.
 * Resolves once listening (so a read made after it misses no write) with the function that stops.
 */
export async function watchOrPoll(store: SessionStore, onChange: () => void, options: StoreWatchOptions = {}): Promise<() => Promise<void>> {
  const poll = async (): Promise<() => Promise<void>> => {
    const poller = setInterval(onChange, POLL_MS);
    poller.unref();
    return async () => clearInterval(poller);
  };
  if (!store.watch) return poll();
  const watchOptions = {
    ...(options.sessionId !== undefined ? { sessionId: options.sessionId } : {}),
    ...(options.onError ? { onError: options.onError } : {}),
  };
  try {
    return await store.watch(() => onChange(), watchOptions);
  } catch (error) {
    if (!options.pollIfWatchFails) throw error;
    options.onError?.(error);
    return poll();
  }
}

/** One SSE message, as text. */
export function sseMessage(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}
