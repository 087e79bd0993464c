/**
 * `session.stream()`: the hub's events as an async iterator that ends after the session
 * waits for the user, is done, or stops. It buffers only between its creation and its end:
 * it unsubscribes itself at that final event or when the reader leaves (`break`, `return()`),
 * so an iterator nobody reads costs the session nothing once the session waits. While the
 * reader lags, consecutive text deltas of one round are merged, so a slow reader holds one
 * string per round rather than one object per token.
 */
import type { SessionStreamEvent, StreamEventOf } from '../core/machines/stream-events.js';
import { isFinalEvent, type SessionEventListener, type SubscribeOptions } from './session-events.js';

export interface EventSource {
  subscribe(listener: SessionEventListener, options?: SubscribeOptions): () => void;
  /** True once nothing more will happen (done, stopped, failed). */
  readonly isOver: boolean;
}

type Waiter = (result: IteratorResult<SessionStreamEvent, undefined>) => void;

const END: IteratorResult<SessionStreamEvent, undefined> = { done: true, value: undefined };

export class SessionEventStream implements AsyncIterableIterator<SessionStreamEvent, undefined> {
  private buffer: SessionStreamEvent[] = [];
  /** Readers waiting for the next event (more than one only if next() is called without awaiting). */
  private waiters: Waiter[] = [];
  private unsubscribe: (() => void) | null = null;
  private ended = false;

  constructor(source: EventSource, options?: SubscribeOptions) {
    if (source.isOver) this.ended = true;
    else this.unsubscribe = source.subscribe((event) => this.push(event), options);
  }

  next(): Promise<IteratorResult<SessionStreamEvent, undefined>> {
    const event = this.buffer.shift();
    if (event) return Promise.resolve({ done: false, value: event });
    if (this.ended) return Promise.resolve(END);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** The reader left: unsubscribe and drop what was buffered. */
  return(): Promise<IteratorResult<SessionStreamEvent, undefined>> {
    this.end();
    this.buffer = [];
    return Promise.resolve(END);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  private push(event: SessionStreamEvent): void {
    const waiter = this.waiters.shift();
    if (waiter) waiter({ done: false, value: event });
    else pushOrMerge(this.buffer, event);
    if (isFinalEvent(event)) this.end();
  }

  private end(): void {
    this.ended = true;
    this.unsubscribe?.();
    this.unsubscribe = null;
    // Readers waiting now will get nothing more (an event in the buffer went to a waiter first).
    for (const waiter of this.waiters.splice(0)) waiter(END);
  }
}

/** How far back a piece looks for an earlier piece of the same text, past pieces of the others. */
const MERGE_LOOKBACK = 8;

type Piece = StreamEventOf<'text_delta'> | StreamEventOf<'tool_call_delta'> | StreamEventOf<'artifact_delta'>;

const isPiece = (e: SessionStreamEvent | undefined): e is Piece => e?.type === 'text_delta' || e?.type === 'tool_call_delta' || e?.type === 'artifact_delta';

/** `next` appended to `piece` when both are pieces of the same text (a round's reply, one tool call's arguments, one tag's draft). */
function merged(piece: Piece, next: Piece): Piece | undefined {
  if (piece.round !== next.round) return undefined;
  if (piece.type === 'text_delta' && next.type === 'text_delta') return { ...piece, text: piece.text + next.text };
  if (piece.type === 'artifact_delta' && next.type === 'artifact_delta' && piece.tag === next.tag) return { ...piece, delta: piece.delta + next.delta };
  if (
    piece.type === 'tool_call_delta' &&
    next.type === 'tool_call_delta' &&
    piece.callIndex === next.callIndex &&
    next.callId === undefined &&
    next.name === undefined
  )
    return { ...piece, argumentsDelta: piece.argumentsDelta + next.argumentsDelta };
  return undefined;
}

/**
 * Appends `event`, or merges it into an earlier buffered piece of the same text, looking back
 * past the pieces of the other texts of that round (a submit's argument pieces and its
 * draft's pieces alternate) but never past another event: each text keeps its order, and
 * everything else keeps its place.
 */
function pushOrMerge(buffer: SessionStreamEvent[], event: SessionStreamEvent): void {
  if (isPiece(event)) {
    for (let i = buffer.length - 1; i >= Math.max(0, buffer.length - MERGE_LOOKBACK); i--) {
      const earlier = buffer[i];
      if (!isPiece(earlier) || earlier.round !== event.round) break;
      const joined = merged(earlier, event);
      if (joined) {
        buffer[i] = joined;
        return;
      }
    }
  }
  buffer.push(event);
}
