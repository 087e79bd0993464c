/**
 * Which sessions someone follows as they run, so that a model call streams only while
 * someone can see its reply as it is written. Streaming is not free: each piece of a reply
 * is a chunk to parse, an event to number, keep for replay and (on PostgreSQL, while another
 * server watches the session) NOTIFY, a large part of what a model round costs a busy server
 * (bench/README.md, "Load"). A call that does not stream returns the same reply.
 *
 * A session is followed while a stream on it is open on this server; for `FOLLOW_MS` after
 * one closed (an EventSource reconnecting, a page between two streams); for `FOLLOW_MS`
 * after a send was answered at once (`Prefer: respond-async`: its caller reads the stream
 * next); and while a stream on it is open on another server, which says so on the event bus
 * every `FOLLOW_MS / 2` (live-events.ts).
 */

/** How long a follow lasts without being renewed. */
export const FOLLOW_MS = 30_000;

/** Follows remembered at most (each is a session id and a time): what other servers announce is bounded too. */
const MAX_REMEMBERED = 10_000;

/**
 * @example
 * const followers = new Followers();
 * const closed = followers.opened('s-1'); // a stream on s-1 opened here
 * followers.isFollowed('s-1'); // true, and for FOLLOW_MS after closed()
 */
export class Followers {
  /** Streams open here, per session. */
  private readonly open = new Map<string, number>();
  /** Until when a session counts as followed without an open stream here (performance.now() time). */
  private readonly until = new Map<string, number>();

  constructor(private readonly now: () => number = () => performance.now()) {}

  isFollowed(sessionId: string): boolean {
    if (this.open.has(sessionId)) return true;
    const until = this.until.get(sessionId);
    if (until === undefined) return false;
    if (until > this.now()) return true;
    this.until.delete(sessionId);
    return false;
  }

  /** A stream on `sessionId` opened here; call what it returns when it closes (once). */
  opened(sessionId: string): () => void {
    this.open.set(sessionId, (this.open.get(sessionId) ?? 0) + 1);
    let closed = false;
    return () => {
      if (closed) return;
      closed = true;
      const left = (this.open.get(sessionId) ?? 1) - 1;
      if (left > 0) this.open.set(sessionId, left);
      else this.open.delete(sessionId);
      this.followFor(sessionId);
    };
  }

  /** Followed for `FOLLOW_MS` from now: a send answered at once, or another server's stream. */
  followFor(sessionId: string): void {
    this.until.delete(sessionId); // re-inserted below: the map's order is the order of renewal
    this.until.set(sessionId, this.now() + FOLLOW_MS);
    if (this.until.size > MAX_REMEMBERED) this.forgetOldest();
  }

  /** Sessions with a stream open here (what this server announces to the others). */
  followedHere(): string[] {
    return [...this.open.keys()];
  }

  /**
   * Drops follows from the least recently renewed on (every follow lasts FOLLOW_MS, so they
   * expire in this order), while they are expired or the map is over its bound.
   */
  private forgetOldest(): void {
    const now = this.now();
    for (const [id, until] of this.until) {
      if (until > now && this.until.size <= MAX_REMEMBERED) return;
      this.until.delete(id);
    }
  }
}
