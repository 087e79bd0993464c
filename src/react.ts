/**
 * `steward/react`: `useSession(client, id)` follows one session of a `steward serve` in a
 * React component (18 or 19; `react` is an optional peer dependency). The state lives in a
 * SessionFeed (framework-free, src/client/session-feed.ts) read with useSyncExternalStore,
 * so a render never tears and StrictMode's second mount reopens the stream it closed.
 *
 * @example
 * import { StewardClient } from 'steward/client';
 * import { useSession } from 'steward/react';
 * const client = new StewardClient({ baseUrl: '/steward', token });
 * function Session({ id }: { id: string }) {
 *   const { view, draft, enabledEvents, send } = useSession(client, id);
 *   return <pre>{draft?.tags.note ?? view?.state}</pre>;
 * }
 */
import { useEffect, useMemo, useSyncExternalStore } from 'react';
import type { Accepted, SendAnswer, SendRequestOptions, StewardClient } from './client/client.js';
import { SessionFeed, type Draft, type FeedStatus, type SessionState } from './client/session-feed.js';
import type { UserEvent } from './core/machines/session.events.js';

export type { Draft, FeedStatus, SessionState };

export interface UseSession extends SessionState {
  /** Sends a user event for the session (see StewardClient.send); a failure is also in `error`. */
  send: (event: UserEvent, options?: SendRequestOptions) => Promise<Accepted | SendAnswer>;
}

/**
 * The live state of session `id` on `client`'s server: its view, its live events, the draft
 * being written (tag → text, from `artifact_delta`), the events the user may send now, and
 * the stream's status (connecting, live, reconnecting, done, error). Reconnects by itself.
 *
 * @example
 * const { view, enabledEvents, send, status } = useSession(client, id);
 * if (enabledEvents.includes('user_approved_next_step')) await send({ type: 'user_approved_next_step', edits: { reason } });
 */
export function useSession(client: StewardClient, id: string): UseSession {
  const feed = useMemo(() => new SessionFeed(client, id), [client, id]);
  useEffect(() => {
    feed.start();
    return () => feed.stop();
  }, [feed]);
  const state = useSyncExternalStore(feed.subscribe, feed.snapshot, feed.snapshot);
  return useMemo(() => ({ ...state, send: feed.send }), [state, feed]);
}
