/**
 * Live updates for the inspector page, over Server-Sent Events. Two sources, one stream:
 * - a session this process runs: its actor's subscription (immediate);
 * - a session another process runs (the CLI): the store's `watch` where it has one
 *   (PostgreSQL's LISTEN/NOTIFY: at once, from any server), else the store polled every
 *   250 ms (SQLite) — a changed revision means new journal entries and a new snapshot.
 * The page is told *that* something changed (session, list of sessions, pending model
 * requests) and fetches what it shows; a lost message costs nothing. A live session's own
 * events (rounds with timings and tokens, tool calls checked…) go out as they are, as
 * `progress` messages (see core/machines/stream-events.ts), with what its model writes as it
 * streams — the text and a worker's draft (`text_delta`, `artifact_delta`,
 * `artifact_draft_discarded`); the raw tool-call pieces (`tool_call_delta`) are left out:
 * the page shows the draft they make.
 */
import type { Subscription } from 'xstate';
import type { ManualModel } from '../models/manual-model.js';
import type { Runtime } from '../runtime/runtime.js';
import type { Session } from '../runtime/session.js';
import type { SessionStore } from '../store/session-store.js';
import { listAll } from '../store/list-page.js';
import { HEARTBEAT_MS, KEEP_ALIVE, RETRY_MS, sseMessage as message, watchOrPoll } from '../http/sse.js';
import { snapshotState } from './replay.js';

/** Where a page's stream is written: raw SSE text (the route holds the HTTP response). */
export interface StreamSink {
  write(text: string): void;
  /** Ends the stream (the inspector closes). */
  end(): void;
}

interface Client {
  res: StreamSink;
  /** The session the page has open, if any. */
  sessionId: string | null;
}

interface Watch {
  /** What the page last heard: store revision + live state, e.g. "12|waiting_user.intake". */
  signature: string;
  session: Session | null;
  subscription: Subscription | null;
  /** Unsubscribes the `progress` forwarding of the live session. */
  offProgress: (() => void) | null;
}

export class LiveHub {
  private readonly clients = new Set<Client>();
  private readonly watches = new Map<string, Watch>();
  private listSignature = '';
  private readonly heartbeat: NodeJS.Timeout;
  private polling = false;
  /** A change arrived during a poll: poll once more when it ends. */
  private pollAgain = false;
  private readonly unwatchStore: Promise<(() => Promise<void>) | null>;
  private readonly offModel: () => void;

  constructor(
    private readonly runtime: Runtime,
    private readonly store: SessionStore,
    manual: ManualModel | null,
    private readonly onError: (error: unknown) => void = () => {},
  ) {
    // Notified of every write where the store can tell; a store that cannot listen is polled.
    this.unwatchStore = watchOrPoll(store, () => void this.poll(), { onError, pollIfWatchFails: true }).catch((error: unknown) => {
      onError(error);
      return null;
    });
    this.heartbeat = setInterval(() => this.broadcast(KEEP_ALIVE), HEARTBEAT_MS);
    this.heartbeat.unref();
    if (manual) {
      const onModel = () => this.broadcast(message('model', { pending: manual.pending().length }));
      manual.on('request', onModel);
      manual.on('settled', onModel);
      this.offModel = () => {
        manual.off('request', onModel);
        manual.off('settled', onModel);
      };
    } else {
      this.offModel = () => {};
    }
  }

  /** Attaches a page's EventSource; returns the detach to call when the page leaves. */
  attach(res: StreamSink, sessionId: string | null): () => void {
    res.write(`retry: ${RETRY_MS}\n\n`);
    const client: Client = { res, sessionId };
    this.clients.add(client);
    if (sessionId) this.watch(sessionId);
    res.write(message('hello', { sessionId }));
    return () => {
      if (!this.clients.delete(client)) return;
      if (sessionId && ![...this.clients].some((c) => c.sessionId === sessionId)) this.unwatch(sessionId);
    };
  }

  /** Tells the pages that watch `sessionId` to refresh it now (after a send from this process). */
  touch(sessionId: string): void {
    this.sendTo(sessionId, message('session', { id: sessionId }));
  }

  close(): void {
    void this.unwatchStore.then((unwatch) => unwatch?.()).catch(this.onError);
    clearInterval(this.heartbeat);
    this.offModel();
    for (const watch of this.watches.values()) {
      watch.subscription?.unsubscribe();
      watch.offProgress?.();
    }
    this.watches.clear();
    for (const client of this.clients) client.res.end();
    this.clients.clear();
  }

  private watch(sessionId: string): void {
    if (this.watches.has(sessionId)) return;
    this.watches.set(sessionId, { signature: '', session: null, subscription: null, offProgress: null });
    void this.poll();
  }

  private unwatch(sessionId: string): void {
    this.watches.get(sessionId)?.subscription?.unsubscribe();
    this.watches.get(sessionId)?.offProgress?.();
    this.watches.delete(sessionId);
  }

  /** Follows the live session of this process, if there is one (resuming replaces it). */
  private follow(sessionId: string, watch: Watch): void {
    const found = this.runtime.live.get(sessionId) ?? null;
    const live = found && found.actorRef.getSnapshot().status !== 'stopped' ? found : null;
    if (live === watch.session) return;
    watch.subscription?.unsubscribe();
    watch.offProgress?.();
    watch.session = live;
    watch.subscription = null;
    watch.offProgress = null;
    if (!live) return;
    watch.offProgress = live.subscribe((event) => {
      if (event.type !== 'tool_call_delta') this.sendTo(sessionId, message('progress', event));
    });
    let queued = false;
    watch.subscription = live.actorRef.subscribe({
      next: () => {
        // Many snapshots can come in one tick (a loop tool round): one message is enough.
        if (queued) return;
        queued = true;
        setImmediate(() => {
          queued = false;
          this.sendTo(sessionId, message('session', { id: sessionId, state: snapshotState(live.actorRef.getSnapshot()) }));
        });
      },
      error: () => this.sendTo(sessionId, message('session', { id: sessionId })),
    });
  }

  private async poll(): Promise<void> {
    if (this.clients.size === 0) return;
    if (this.polling) {
      this.pollAgain = true;
      return;
    }
    this.polling = true;
    try {
      const list = await listAll(this.store);
      const listSignature = list.map((s) => `${s.id}@${s.revision}:${s.state}`).join(',');
      if (listSignature !== this.listSignature) {
        this.listSignature = listSignature;
        this.broadcast(message('sessions', { count: list.length }));
      }
      for (const [id, watch] of this.watches) {
        this.follow(id, watch);
        const summary = list.find((s) => s.id === id);
        const liveState = watch.session ? snapshotState(watch.session.actorRef.getSnapshot()) : '';
        const signature = `${summary?.revision ?? 0}|${liveState}`;
        if (signature !== watch.signature) {
          const first = watch.signature === '';
          watch.signature = signature;
          if (!first) this.sendTo(id, message('session', { id, revision: summary?.revision ?? null }));
        }
      }
    } catch (error) {
      this.onError(error);
    } finally {
      this.polling = false;
      if (this.pollAgain) {
        this.pollAgain = false;
        void this.poll();
      }
    }
  }

  private sendTo(sessionId: string, text: string): void {
    for (const client of this.clients) if (client.sessionId === sessionId) client.res.write(text);
  }

  private broadcast(text: string): void {
    for (const client of this.clients) client.res.write(text);
  }
}
