/**
 * The streams one caller may hold open at once (`--max-streams-per-caller`): every open
 * stream — a session's event stream, an AG-UI run, an A2A SendStreamingMessage or
 * SubscribeToTask — costs a connection, a queue of live events and a watcher of the session,
 * so one caller (one token; without tokens every client as one) opening thousands would hold
 * the server's memory. One instance per app; the counts live only while streams are open.
 */
import type { Caller } from './auth.js';
import { HttpError } from './errors.js';

/** Who every client is without tokens (the create limit counts them alike). */
const ANONYMOUS = 'anonymous';

/** The OpenAPI description of a stream route's refusal past the limit. */
export const TOO_MANY_STREAMS =
  'too_many_streams: this caller holds as many open streams (session streams, AG-UI runs, A2A streams) as --max-streams-per-caller allows: close one first';

/**
 * A caller holds as many open streams as the server allows: 429 `too_many_streams`, naming
 * the limit and the setting that raises it.
 *
 * @example
 * if (TooManyStreamsError.isInstance(error)) console.log(`${error.caller} holds ${error.max} streams`);
 */
export class TooManyStreamsError extends HttpError {
  static override readonly errorName: string = 'TooManyStreamsError';
  constructor(
    readonly caller: string,
    readonly max: number,
  ) {
    super(
      429,
      'too_many_streams',
      `${caller === ANONYMOUS ? 'The clients of this server (no tokens: they count as one caller)' : `The caller "${caller}"`} ` +
        `hold${caller === ANONYMOUS ? '' : 's'} ${max} open streams, this server's limit per caller (--max-streams-per-caller): ` +
        'close a stream you no longer read (an EventSource, an AG-UI run, an A2A stream) before opening another, or start the server ' +
        'with a higher --max-streams-per-caller (startServe / createServeApp maxStreamsPerCaller; 0: no limit).',
    );
  }
}

/**
 * Open streams per caller, at most `max` each.
 *
 * @example
 * const slots = new StreamSlots(100);
 * const release = slots.take(c.get('caller')); // throws TooManyStreamsError past the limit
 * try { await writeStream(…) } finally { release(); }
 */
export class StreamSlots {
  private readonly open = new Map<string, number>();

  constructor(readonly max: number) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`max must be a whole number ≥ 1 (got ${String(max)})`);
  }

  /**
   * Takes one of the caller's slots, or throws TooManyStreamsError. Callers are told apart by
   * the credential the auth middleware verified (a stream ticket carries its issuer's). Call
   * what it returns when the stream ends; a second call does nothing.
   */
  take(caller: Caller | undefined): () => void {
    const name = caller?.name ?? ANONYMOUS;
    const held = this.open.get(name) ?? 0;
    if (held >= this.max) throw new TooManyStreamsError(name, this.max);
    this.open.set(name, held + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.open.get(name) ?? 1) - 1;
      if (left > 0) this.open.set(name, left);
      else this.open.delete(name);
    };
  }
}
