/**
 * A session's Server-Sent Events read over fetch, as an async iterable. EventSource would
 * reconnect by itself, but it cannot send the Authorization header; this reader can, and
 * does what EventSource does besides: it remembers the last `id:` it saw and sends it back
 * as Last-Event-ID when it reopens a dropped connection (the server resumes after it), after
 * a backoff that starts at the server's `retry:`. The wire format is parsed by
 * eventsource-parser (maintained, no dependencies, browser-safe); every message's data is
 * checked with the server's own schemas.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import * as z from 'zod';
import { RequestError, StewardError } from '../core/errors.js';
import { SessionStreamEventSchema, type SessionStreamEvent } from '../core/machines/stream-events.js';
import { JournalEntrySchema } from '../store/records.js';
import { errorOfBody } from './errors.js';

/** One message of the stream. `id` is opaque: it is what a reconnect resumes after. */
export type StreamMessage =
  | { type: 'hello'; sessionId: string }
  | { type: 'entry'; id: string | undefined; entry: z.infer<typeof JournalEntrySchema> }
  | { type: 'session'; id: string | undefined; event: SessionStreamEvent }
  | { type: 'done' };

export interface ReconnectOptions {
  /** First wait before reopening (ms); the server's `retry:` replaces it. Default 1000. */
  initialDelayMs?: number;
  /** The wait doubles per failed attempt up to this (ms). Default 15000. */
  maxDelayMs?: number;
  /** Failed attempts in a row before the stream gives up with the last error. Default 10. */
  maxAttempts?: number;
}

export interface StreamOptions {
  /** Ends the stream (the iteration then finishes without an error). */
  signal?: AbortSignal;
  /** Resume after this journal seq (the first connection only; reconnects use the last id seen). */
  after?: number;
  /** Resume after this id, as a reconnect would (a page that kept the last id across a reload). */
  lastEventId?: string;
  reconnect?: ReconnectOptions;
  /** Told before each reopening: the failures in a row so far and the last one (a UI shows "reconnecting"). */
  onReconnect?: (attempt: number, error: unknown) => void;
}

/** What the client gives the reader: how to open a connection and how to turn a refusal into an error. */
interface Transport {
  url: (after: number | undefined) => string;
  open: (url: string, headers: Record<string, string>, signal: AbortSignal) => Promise<Response>;
  failure: (response: Response) => Promise<StewardError>;
}

/** Statuses after which reopening may succeed: the server is restarting, overloaded or behind a proxy that dropped it. */
const RETRIABLE = new Set([408, 429, 500, 502, 503, 504]);

/** One SSE message is at most this long: a server never sends more, so more is not the API. */
const MAX_MESSAGE_CHARS = 4 * 1024 * 1024;

const HelloData = z.looseObject({ sessionId: z.string() });

/** The reader of one session's stream; `streamSession` is what `client.stream()` returns. */
export async function* streamSession(options: Transport & StreamOptions): AsyncIterableIterator<StreamMessage> {
  const { initialDelayMs = 1000, maxDelayMs = 15_000, maxAttempts = 10 } = options.reconnect ?? {};
  const stop = new AbortController();
  const abort = () => stop.abort();
  options.signal?.addEventListener('abort', abort, { once: true });
  if (options.signal?.aborted) stop.abort();
  let lastEventId = options.lastEventId;
  let delay = initialDelayMs;
  let failures = 0;
  try {
    while (!stop.signal.aborted) {
      let lastError: unknown;
      try {
        const headers: Record<string, string> = { accept: 'text/event-stream', ...(lastEventId !== undefined ? { 'last-event-id': lastEventId } : {}) };
        const response = await options.open(options.url(lastEventId === undefined ? options.after : undefined), headers, stop.signal);
        if (!response.ok || !response.body) {
          const error = await options.failure(response);
          if (!RETRIABLE.has(response.status)) throw error;
          lastError = error;
        } else {
          const queue: EventSourceMessage[] = [];
          const parser = createParser({
            onEvent: (message) => queue.push(message),
            onRetry: (ms) => (delay = Math.min(ms, maxDelayMs)),
            maxBufferSize: MAX_MESSAGE_CHARS,
          });
          const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
          try {
            for (;;) {
              const { value, done } = await reader.read();
              if (done) break;
              parser.feed(value);
              for (const raw of queue.splice(0)) {
                if (raw.id !== undefined) lastEventId = raw.id;
                const message = parseMessage(raw);
                if (!message) continue;
                // Something came through: the connection works, the next drop starts the backoff afresh.
                failures = 0;
                if (message.type === 'error') throw message.error;
                yield message;
                if (message.type === 'done') return;
              }
            }
          } finally {
            reader.cancel().catch(() => {});
          }
        }
      } catch (error) {
        if (stop.signal.aborted) return;
        // The server refused the stream, or a message said it failed: not a dropped connection.
        if (StewardError.isInstance(error) && !(RequestError.isInstance(error) && error.code === 'network_error')) throw error;
        lastError = error;
      }
      failures++;
      if (failures > maxAttempts) throw lastError ?? new Error('The stream ended before `done`.');
      options.onReconnect?.(failures, lastError);
      await sleep(Math.min(delay * 2 ** (failures - 1), maxDelayMs), stop.signal);
    }
  } finally {
    options.signal?.removeEventListener('abort', abort);
    stop.abort();
  }
}

type Parsed = StreamMessage | { type: 'error'; error: StewardError };

/** A wire message as a StreamMessage; undefined for what a client skips (unknown events, a newer server's live types). */
function parseMessage(raw: EventSourceMessage): Parsed | undefined {
  const data = parseJson(raw.data);
  switch (raw.event) {
    case 'hello': {
      const hello = HelloData.safeParse(data);
      return hello.success ? { type: 'hello', sessionId: hello.data.sessionId } : undefined;
    }
    case 'entry': {
      const entry = JournalEntrySchema.safeParse(data);
      return entry.success ? { type: 'entry', id: raw.id, entry: entry.data } : undefined;
    }
    case 'session': {
      const event = SessionStreamEventSchema.safeParse(data);
      return event.success ? { type: 'session', id: raw.id, event: event.data } : undefined;
    }
    case 'done':
      return { type: 'done' };
    case 'error': {
      return { type: 'error', error: errorOfBody(data, 200, { what: 'the stream with `event: error`' }) };
    }
    default:
      return undefined;
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
