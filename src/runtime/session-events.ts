/**
 * How the runtime delivers the live events of a session (their schema is the chart's:
 * machines/stream-events.ts): which events end a stream, and what a listener is.
 */
import type { SessionStreamEvent, SessionStreamEventType, StreamEventOf } from '../machines/stream-events.js';

/** The events after which the session waits for the user, is done, or no longer runs: a stream ends with one. */
export const FINAL_EVENT_TYPES = ['waiting', 'done', 'stopped'] as const satisfies readonly SessionStreamEventType[];

export function isFinalEvent(event: SessionStreamEvent): event is StreamEventOf<(typeof FINAL_EVENT_TYPES)[number]> {
  return (FINAL_EVENT_TYPES as readonly string[]).includes(event.type);
}

export type SessionEventListener = (event: SessionStreamEvent) => void;

export interface SubscribeOptions {
  /**
   * Whether this listener wants `text_delta` events (default true). While at least one
   * listener wants them, a model that can stream (OpenAIModel) streams its replies.
   */
  textDeltas?: boolean;
}
