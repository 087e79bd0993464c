/**
 * `session.stream()`: the hub's events as an async iterator that ends after the session
 * waits for the user, is done, or stops. It buffers only between its creation and its end:
 * it unsubscribes itself at that final event or when the reader leaves (`break`, `return()`),
 * so an iterator nobody reads costs the session nothing once the session waits. While the
 * reader lags, consecutive text deltas of one round are merged, so a slow reader holds one
 * string per round rather than one object per token.
 */
import type { SessionStreamEvent } from '../machines/stream-events.js';
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

/**
 * Appends `event`, or merges it into the last buffered event when both are pieces of the same
 * text: of a round's reply, of one tool call's arguments, or of one tag's draft.
 */
function pushOrMerge(buffer: SessionStreamEvent[], event: SessionStreamEvent): void {
  const last = buffer[buffer.length - 1];
  if (event.type === 'text_delta' && last?.type === 'text_delta' && last.round === event.round) {
    buffer[buffer.length - 1] = { ...last, text: last.text + event.text };
  } else if (event.type === 'artifact_delta' && last?.type === 'artifact_delta' && last.round === event.round && last.tag === event.tag) {
    buffer[buffer.length - 1] = { ...last, delta: last.delta + event.delta };
  } else if (
    event.type === 'tool_call_delta' &&
    last?.type === 'tool_call_delta' &&
    last.round === event.round &&
    last.callIndex === event.callIndex &&
    event.callId === undefined &&
    event.name === undefined
  ) {
    buffer[buffer.length - 1] = { ...last, argumentsDelta: last.argumentsDelta + event.argumentsDelta };
  } else {
    buffer.push(event);
  }
}
