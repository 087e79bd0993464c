/**
 * The live events one `steward serve` process keeps and passes on (see live-replay.ts for
 * what a run and a record are): the records of the sessions it runs go into its replay
 * buffers at once and onto the store's event bus (PostgreSQL NOTIFY) for every other server;
 * what the bus brings from the others goes into the same buffers. So every server keeps the
 * same records under the same numbers, and a stream opened on any of them replays the
 * current run. On a store without a bus (SQLite, memory) only this process's sessions have
 * live events.
 *
 * It also knows who follows which session (followers.ts), here and, through notices on the
 * bus, on the other servers: a model call streams only while someone does.
 */
import * as z from 'zod';
import { sessionIdProblem } from '../ids.js';
import type { EventBus } from '../store/session-store.js';
import { FOLLOW_MS, Followers } from './followers.js';
import { LiveRecordSchema, ReplayBuffers, type LiveRecord, type ReplayLimits } from './live-replay.js';

/** What a server says on the bus while a stream on a session is open there. */
const FollowNoticeSchema = z.strictObject({ followed: z.string().refine((id) => sessionIdProblem(id) === null) });

export class LiveEvents {
  /** The current run's live events of the sessions this process hears about, for streams that open late or reconnect. */
  readonly replay: ReplayBuffers;
  /** The bus, listened to for every session once something here needs live events. */
  private hearing: Promise<() => Promise<void>> | null = null;
  private readonly followers = new Followers();
  /** Renews this server's follows on the bus while it has streams open. */
  private announcing: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly bus: EventBus | undefined,
    private readonly log: (message: string) => void,
    replayLimits: Partial<ReplayLimits> = {},
  ) {
    this.replay = new ReplayBuffers(replayLimits);
  }

  /** A record of a session this process runs: kept here, and published to the other servers. */
  publish(sessionId: string, record: LiveRecord): void {
    this.replay.add(sessionId, record);
    this.bus?.publishEvents(sessionId, [record]);
  }

  /**
   * The current run's records of a session kept so far, and each new one from wherever it
   * runs. Resolves once listening. A watcher follows the session (its model calls stream)
   * unless `follow` is false: one that reads no deltas should not make them.
   */
  async watch(sessionId: string, listener: (record: LiveRecord) => void, { follow = true } = {}): Promise<{ replay: LiveRecord[]; stop: () => void }> {
    await this.hear();
    const watched = this.replay.watch(sessionId, listener);
    if (!follow) return watched;
    const closed = this.followers.opened(sessionId);
    this.announce(sessionId);
    // Handed to the database before the stream says hello; the other servers read it from
    // their LISTEN connection soon after (best effort: a send in that moment may not stream).
    await this.bus?.flush?.().catch(() => {});
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
        // This process's own records are kept already (publish): their echo is skipped unparsed.
        const record = raw as { run?: unknown; n?: unknown; event?: { sessionId?: unknown }; followed?: unknown };
        if (this.replay.has(record.event?.sessionId, record.run, record.n)) return;
        if (record.followed !== undefined) {
          const notice = FollowNoticeSchema.safeParse(raw);
          if (notice.success) this.followers.followFor(notice.data.followed);
          return;
        }
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
   * Tells the other servers that a stream on `sessionId` is open here, and keeps telling them
   * of every stream open here, every half follow, while any is (no-op without a bus).
   */
  private announce(sessionId: string): void {
    const bus = this.bus;
    if (!bus || this.closed) return;
    const tell = (id: string) => bus.publishEvents(id, [{ followed: id }]);
    tell(sessionId);
    this.announcing ??= setInterval(() => {
      const open = this.followers.followedHere();
      if (open.length === 0 && this.announcing) {
        clearInterval(this.announcing);
        this.announcing = null;
      }
      open.forEach(tell);
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
