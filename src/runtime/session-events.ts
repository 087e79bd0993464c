/**
 * How the runtime delivers the live events of a session (their schema is the chart's:
 * core/machines/stream-events.ts): which events end a stream, and what a listener is.
 */
import type { SessionStreamEvent, SessionStreamEventType, StreamEventOf } from '../core/machines/stream-events.js';

/** The events after which the session waits for the user, is done, or no longer runs: a stream ends with one. */
export const FINAL_EVENT_TYPES = ['waiting', 'done', 'stopped'] as const satisfies readonly SessionStreamEventType[];

export function isFinalEvent(event: SessionStreamEvent): event is StreamEventOf<(typeof FINAL_EVENT_TYPES)[number]> {
  return (FINAL_EVENT_TYPES as readonly string[]).includes(event.type);
}

export type SessionEventListener = (event: SessionStreamEvent) => void;

export interface SubscribeOptions {
  /**
   * Whether this listener wants the events of a reply as it is written (`text_delta`,
   * `tool_call_delta`, `artifact_delta`, `artifact_draft_discarded`; default true). While at least one listener wants
   * them, a model that can stream (OpenAIModel) streams its replies. A function is asked as
   * each model call starts, so the call streams only while someone can see it (`steward
   * serve` asks whether a stream follows the session); the listener then gets the deltas of
   * the calls that stream.
   */
  textDeltas?: boolean | (() => boolean);
}
