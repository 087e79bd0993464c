/**
 * One session as a UI follows it, without a framework: the view (read with GET when the
 * journal moves), the live events, the draft of the artifact being written, what the user
 * may send now, and the connection's status — one immutable snapshot, replaced on each
 * change and announced to subscribers. `steward/react`'s `useSession` is this plus
 * `useSyncExternalStore`; another framework needs only `subscribe` and `snapshot`.
 */
import type { SessionStreamEvent } from '../core/machines/stream-events.js';
import type { UserEvent, UserEventType } from '../core/machines/session.events.js';
import type { SessionView } from '../core/view.js';
import type { Accepted, SendAnswer, SendRequestOptions, StewardClient } from './client.js';

/** The artifact a worker is writing, tag → text so far, from its `artifact_delta` events. */
export interface Draft {
  worker: string;
  round: number;
  tags: Readonly<Record<string, string>>;
}

/**
 * connecting: the first connection; live: the stream is open; reconnecting: it dropped and
 * is reopened; done: the session ended (and so did the stream); error: it gave up (`error` says why).
 */
export type FeedStatus = 'connecting' | 'live' | 'reconnecting' | 'done' | 'error';

export interface SessionState {
  view: SessionView | null;
  /** The live events of the session since the page followed it, oldest first (the last EVENTS_KEPT). */
  events: readonly SessionStreamEvent[];
  draft: Draft | null;
  /** What the user may send now: the view's enabledEvents, none while the session runs or a send is under way. */
  enabledEvents: readonly UserEventType[];
  status: FeedStatus;
  error: Error | null;
}

/** Live events a feed keeps: text deltas come by the thousand, a UI shows the recent ones. */
const EVENTS_KEPT = 500;

const INITIAL: SessionState = { view: null, events: [], draft: null, enabledEvents: [], status: 'connecting', error: null };

/** The draft after one live event: deltas grow it (a new round starts it afresh); a published or discarded draft, or the end of the run, clears it. */
export function nextDraft(draft: Draft | null, event: SessionStreamEvent): Draft | null {
  switch (event.type) {
    case 'artifact_delta': {
      const same = draft && draft.round === event.round && draft.worker === event.worker;
      const tags = same ? draft.tags : {};
      return { worker: event.worker, round: event.round, tags: { ...tags, [event.tag]: (tags[event.tag] ?? '') + event.delta } };
    }
    // A discarded draft (refused, failed, or replaced by the whole bodies as new deltas) starts afresh.
    case 'artifact_draft_discarded':
    case 'artifact_published':
    case 'waiting':
    case 'done':
    case 'stopped':
      return null;
    default:
      return draft;
  }
}

/**
 * Follows one session of a client: `start()` opens its stream (again, after a `stop()`:
 * React's StrictMode mounts twice), `stop()` closes it.
 *
 * @example
 * const feed = new SessionFeed(client, id);
 * feed.subscribe(() => render(feed.snapshot()));
 * feed.start();
 */
export class SessionFeed {
  private state: SessionState = INITIAL;
  private readonly listeners = new Set<() => void>();
  private running: AbortController | null = null;
  private sending = 0;
  /** A view read is under way; `stale`: the journal moved since it was asked for, read again after it. */
  private reading: Promise<void> | null = null;
  private stale = false;

  constructor(
    private readonly client: StewardClient,
    readonly sessionId: string,
  ) {}

  /** The current state; the same object until something changes (what useSyncExternalStore needs). */
  readonly snapshot = (): SessionState => this.state;

  /** Calls `listener` after each change; returns the function that stops it. */
  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  start(): void {
    if (this.running) return;
    const running = new AbortController();
    this.running = running;
    void this.follow(running.signal);
  }

  stop(): void {
    this.running?.abort();
    this.running = null;
  }

  /**
   * Sends a user event for the session. Waiting (the default), the answer's view becomes the
   * view; with `{ wait: false }` the stream tells the rest. A refusal is in the answer
   * (`ok: false`), a failure also in `error`. The event names the wait the view shows (unless
   * it names one itself): a decision made on that view is never applied to a later wait
   * (another tab answered first: `wait_closed`, or a harmless repeat).
   *
   * @example
   * await feed.send({ type: 'user_accepted_artifact', artifactId: 'a1', edits: { note: 'Shorter.' } });
   */
  readonly send = async (event: UserEvent, options: SendRequestOptions = {}): Promise<Accepted | SendAnswer> => {
    this.sending++;
    this.update({});
    try {
      const wait = event.wait ?? this.state.view?.wait;
      const answer = await this.client.send(this.sessionId, wait === undefined ? event : { ...event, wait }, options);
      if ('view' in answer) this.update({ view: answer.view, error: null });
      // Taken, not run yet: the view read now is the running one, so the wait just answered is not offered again meanwhile.
      else if (this.running) await this.refresh(this.running.signal);
      return answer;
    } catch (error) {
      this.update({ error: asError(error) });
      throw error;
    } finally {
      this.sending--;
      this.update({});
    }
  };

  private async follow(signal: AbortSignal): Promise<void> {
    try {
      for await (const message of this.client.stream(this.sessionId, { signal, onReconnect: () => this.update({ status: 'reconnecting' }) })) {
        if (message.type === 'hello') {
          this.update({ status: 'live' });
          void this.refresh(signal);
        } else if (message.type === 'entry') {
          void this.refresh(signal);
        } else if (message.type === 'session') {
          const event = message.event;
          this.update({ events: [...this.state.events.slice(1 - EVENTS_KEPT), event], draft: nextDraft(this.state.draft, event) });
        } else if (message.type === 'done') {
          await this.refresh(signal);
          this.update({ status: 'done' });
        }
      }
    } catch (error) {
      if (!signal.aborted) this.update({ status: 'error', error: asError(error) });
    }
  }

  /** Reads the view again; reads that pile up while one is under way become one more read after it. Resolves when the view is current. */
  private refresh(signal: AbortSignal): Promise<void> {
    if (this.reading) {
      this.stale = true;
      return this.reading;
    }
    const reading = (async () => {
      do {
        this.stale = false;
        try {
          const { view } = await this.client.get(this.sessionId, { signal });
          if (!signal.aborted) this.update({ view });
        } catch (error) {
          if (!signal.aborted) this.update({ error: asError(error) });
          return;
        }
      } while (this.stale && !signal.aborted);
    })().finally(() => (this.reading = null));
    this.reading = reading;
    return reading;
  }

  private update(change: Partial<Omit<SessionState, 'enabledEvents'>>): void {
    const next = { ...this.state, ...change };
    const enabled = this.sending > 0 || !next.view || next.view.phase !== 'waiting_user' ? [] : next.view.enabledEvents;
    next.enabledEvents = sameList(enabled, this.state.enabledEvents) ? this.state.enabledEvents : enabled;
    if (Object.keys(next).every((key) => next[key as keyof SessionState] === this.state[key as keyof SessionState])) return;
    this.state = next;
    for (const listener of this.listeners) listener();
  }
}

function sameList<T>(a: readonly T[], b: readonly T[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
