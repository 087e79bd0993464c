/**
 * The live events one `steward serve` process keeps and passes on (see live-replay.ts for
 * what a run and a record are): the records of the sessions it runs go into its replay
 * buffers at once and onto the store's event bus (PostgreSQL NOTIFY) for every other server;
 * what the bus brings from the others goes into the same buffers. So every server keeps the
 * same records under the same numbers, and a stream opened on any of them replays the
 * current run. On a store without a bus (SQLite, memory) only this process's sessions have
 * live events.
 */
import type { EventBus } from '../store/session-store.js';
import { LiveRecordSchema, ReplayBuffers, type LiveRecord } from './live-replay.js';

export class LiveEvents {
  /** The current run's live events of the sessions this process hears about, for streams that open late or reconnect. */
  readonly replay = new ReplayBuffers();
  /** The bus, listened to for every session once something here needs live events. */
  private hearing: Promise<() => Promise<void>> | null = null;

  constructor(
    private readonly bus: EventBus | undefined,
    private readonly log: (message: string) => void,
  ) {}

  /** A record of a session this process runs: kept here, and published to the other servers. */
  publish(sessionId: string, record: LiveRecord): void {
    this.replay.add(sessionId, record);
    this.bus?.publishEvents(sessionId, [record]);
  }

  /** The current run's records of a session kept so far, and each new one from wherever it runs. Resolves once listening. */
  async watch(sessionId: string, listener: (record: LiveRecord) => void): Promise<{ replay: LiveRecord[]; stop: () => void }> {
    await this.hear();
    return this.replay.watch(sessionId, listener);
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
        const record = raw as { run?: unknown; n?: unknown; event?: { sessionId?: unknown } };
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

  /** Stops listening to the bus. */
  async close(): Promise<void> {
    const hearing = this.hearing;
    this.hearing = null;
    await hearing?.then((stop) => stop()).catch(() => {});
  }
}
