/**
 * The live events one `steward serve` process keeps and passes on (see live-replay.ts for
 * what a run and a record are): the records of the sessions it runs go into its replay
 * buffers at once, and onto the store's event bus (PostgreSQL NOTIFY) while a server watches
 * the session; what the bus brings from the others goes into the same buffers. On a store
 * without a bus (SQLite, memory) only this process's sessions have live events.
 *
 * A server with a watcher of a session (a stream, or a protocol waiting for the next wait)
 * says so on the bus, and renews it every `FOLLOW_MS / 2` while the watcher stays: `followed`
 * for a watcher that shows text deltas, `watched` for one that reads none. The server running
 * the session starts publishing its records then, beginning with what it kept of its last run
 * (the one under way, or just ended). So a stream opened on any server mid-run replays the
 * run, and a session nobody watches costs the bus nothing: most sessions are watched nowhere
 * while they run, and each NOTIFY is a statement that wakes a database backend.
 *
 * Who follows which session (followers.ts), here or elsewhere, decides whether a model call
 * streams.
 */
import * as z from 'zod';
import { sessionIdProblem } from '../ids.js';
import type { EventBus } from '../store/session-store.js';
import { FOLLOW_MS, Followers } from './followers.js';
import { LiveRecordSchema, ReplayBuffers, type LiveRecord, type ReplayLimits } from './live-replay.js';

const NoticeSessionId = z.string().refine((id) => sessionIdProblem(id) === null);
/** What a server says on the bus about a session it has watchers of (see the top of this file). */
const NoticeSchema = z.union([z.strictObject({ followed: NoticeSessionId }), z.strictObject({ watched: NoticeSessionId })]);
type Notice = z.infer<typeof NoticeSchema>;

export class LiveEvents {
  /** The current run's live events of the sessions this process hears about, for streams that open late or reconnect. */
  readonly replay: ReplayBuffers;
  /** The bus, listened to for every session once something here needs live events. */
  private hearing: Promise<() => Promise<void>> | null = null;
  private readonly followers = new Followers();
  /** Sessions a server on the bus has watchers of (its notices, kept as follows are): their records go on the bus. */
  private readonly watchedOnBus = new Followers();
  /** Watchers open here that read no deltas (announced as `watched`; only those open count). */
  private readonly quietHere = new Followers();
  /** Renews this server's notices on the bus while it has watchers open. */
  private announcing: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly bus: EventBus | undefined,
    private readonly log: (message: string) => void,
    replayLimits: Partial<ReplayLimits> = {},
  ) {
    this.replay = new ReplayBuffers(replayLimits);
  }

  /** A record of a session this process runs: kept here, and published to the other servers while one watches it. */
  publish(sessionId: string, record: LiveRecord): void {
    this.replay.add(sessionId, record, { own: true });
    if (this.watchedOnBus.isFollowed(sessionId)) this.bus?.publishEvents(sessionId, [record]);
  }

  /**
   * The current run's records of a session kept so far, and each new one from wherever it
   * runs. Resolves once listening. A watcher follows the session (its model calls stream)
   * unless `follow` is false: one that reads no deltas should not make them.
   */
  async watch(sessionId: string, listener: (record: LiveRecord) => void, { follow = true } = {}): Promise<{ replay: LiveRecord[]; stop: () => void }> {
    await this.hear();
    const watched = this.replay.watch(sessionId, listener);
    const closed = (follow ? this.followers : this.quietHere).opened(sessionId);
    this.announce(sessionId, follow ? 'followed' : 'watched');
    // Handed to the database before the stream says hello; the other servers read it from
    // their LISTEN connection soon after (best effort: a send in that moment may not stream).
    if (follow) await this.bus?.flush?.().catch(() => {});
    return {
      replay: watched.replay,
      stop: () => {
        watched.stop();
        closed();
      },
    };
  }

  /** Whether someone follows the session now (followers.ts): its next model call streams. */
  isFollowed(sessionId: string): boolean {
    return this.followers.isFollowed(sessionId);
  }

  /** A caller will follow the session soon (a send answered at once): followed for a while from now. */
  expectFollower(sessionId: string): void {
    this.followers.followFor(sessionId);
  }

  /**
   * Listens to the bus for every session, once (before a run starts here, so its records
   * from other processes are heard too). Resolves once listening.
   */
  hear(): Promise<unknown> {
    const bus = this.bus;
    if (!bus) return Promise.resolve();
    this.hearing ??= bus.watchEvents(
      undefined,
      (raw) => {
        const record = raw as { run?: unknown; n?: unknown; event?: { sessionId?: unknown } };
        if (record.event === undefined) {
          const notice = NoticeSchema.safeParse(raw);
          if (notice.success) this.heard(notice.data);
          return;
        }
        // Records kept already (this process's own, or sent again to a new watcher) are skipped unparsed.
        if (this.replay.has(record.event?.sessionId, record.run, record.n)) return;
        // From the database: anyone who can NOTIFY could have sent it.
        const parsed = LiveRecordSchema.safeParse(raw);
        if (parsed.success) this.replay.add(parsed.data.event.sessionId, parsed.data);
      },
      { onError: (error) => this.log(`serve: live events: ${error instanceof Error ? error.message : String(error)}`) },
    );
    this.hearing.catch(() => (this.hearing = null));
    return this.hearing;
  }

  /**
   * A notice from a server on the bus (this one's own too: it cannot tell them apart, and one
   * costs only publishing). When nobody watched the session on the bus before, what this
   * process kept of the last run it numbered goes out first, in order and before any later
   * record, so the new watcher replays the whole run — also one that ended just before the
   * notice came (a watcher that started mid-run, on a busy bus). Best effort: if another server
   * ran the session since, unwatched, that older run may come too (the journal is the record).
   */
  private heard(notice: Notice): void {
    const sessionId = 'followed' in notice ? notice.followed : notice.watched;
    if ('followed' in notice) this.followers.followFor(sessionId);
    const watchedBefore = this.watchedOnBus.isFollowed(sessionId);
    this.watchedOnBus.followFor(sessionId);
    if (watchedBefore) return;
    const kept = this.replay.ownRecords(sessionId);
    if (kept.length > 0) this.bus?.publishEvents(sessionId, kept);
  }

  /**
   * Tells the other servers that a watcher of `sessionId` is open here, and keeps telling them
   * of every watcher open here, every half follow, while any is (no-op without a bus).
   */
  private announce(sessionId: string, kind: 'followed' | 'watched'): void {
    const bus = this.bus;
    if (!bus || this.closed) return;
    const tell = (id: string, as: 'followed' | 'watched') => bus.publishEvents(id, [(as === 'followed' ? { followed: id } : { watched: id }) satisfies Notice]);
    tell(sessionId, kind);
    this.announcing ??= setInterval(() => {
      const followed = new Set(this.followers.followedHere());
      const quiet = this.quietHere.followedHere().filter((id) => !followed.has(id));
      if (followed.size === 0 && quiet.length === 0 && this.announcing) {
        clearInterval(this.announcing);
        this.announcing = null;
      }
      for (const id of followed) tell(id, 'followed');
      for (const id of quiet) tell(id, 'watched');
    }, FOLLOW_MS / 2).unref();
  }

  /** Stops listening to the bus. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.announcing) clearInterval(this.announcing);
    this.announcing = null;
    const hearing = this.hearing;
    this.hearing = null;
    await hearing?.then((stop) => stop()).catch(() => {});
  }
}
