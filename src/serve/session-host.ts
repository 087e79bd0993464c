/**
 * The sessions one `steward serve` process drives. A session is held in memory only while a
 * request uses it: loaded from the store for a send, closed when the send settles. So every
 * request sees what any other server wrote, memory does not grow with the number of
 * sessions, and two servers racing on one session meet at the store's revision check
 * (one wins, the other answers 409 conflict).
 *
 * Shutdown (`drain`): no new sends; the ones under way get `graceMs` to settle; then the
 * rest are stopped — each stays saved at its last write (a model call in flight runs again
 * when the session is resumed, by another server's request or `steward run --session`).
 */
import { snapshotState } from '../machines/refusals.js';
import { storedSnapshot } from '../runtime/persisted.js';
import type { Runtime } from '../runtime/runtime.js';
import type { SendResult, Session } from '../runtime/session.js';
import { sessionView, type SessionView } from '../runtime/view.js';
import type { SessionStore } from '../store/session-store.js';
import { HttpError } from './http-error.js';

interface Held {
  /** The session, once loaded. */
  ready: Promise<Session>;
  /** Requests using it; counted at once, so a release never closes it under a newcomer. */
  users: number;
}

export class SessionHost {
  private readonly held = new Map<string, Held>();
  private readonly sends = new Set<Promise<unknown>>();
  private draining = false;

  constructor(
    readonly runtime: Runtime,
    readonly store: SessionStore,
  ) {}

  get isDraining(): boolean {
    return this.draining;
  }

  /** Sessions with a send under way in this process. */
  get busy(): number {
    return this.held.size;
  }

  async create(options: { packageId?: string; maxBurst?: number }): Promise<{ view: SessionView; revision: number | null }> {
    this.refuseWhileDraining();
    const session = await this.runtime.createSession(options);
    // A new session waits for its first input: nothing runs, so nothing needs to stay loaded.
    const answer = { view: session.view(), revision: session.revision ?? null };
    await session.close();
    return answer;
  }

  /** The session's view: the live one while this process runs it, else the stored one. */
  async view(id: string): Promise<{ view: SessionView; revision: number | null }> {
    const held = this.held.get(id);
    const session = held ? await held.ready.catch(() => undefined) : undefined;
    if (session) return { view: session.view(), revision: session.revision ?? null };
    const stored = await this.store.load(id);
    if (!stored) throw notFound(id);
    return { view: sessionView(storedSnapshot(this.runtime.machine, stored)), revision: stored.revision };
  }

  /** Sends a validated user event; resolves with the SendResult once the session waits again. */
  async send(id: string, event: unknown): Promise<SendResult & { revision: number | null }> {
    this.refuseWhileDraining();
    const held = this.hold(id);
    try {
      const session = await held.ready;
      const sending = session.send(event);
      this.sends.add(sending);
      try {
        const result = await sending;
        return { ...result, revision: session.revision ?? null };
      } finally {
        this.sends.delete(sending);
      }
    } finally {
      await this.release(id, held);
    }
  }

  /** Stops taking sends, lets those under way settle for up to `graceMs`, then stops the rest. */
  async drain(graceMs: number): Promise<{ settled: number; handedBack: string[] }> {
    this.draining = true;
    const pending = [...this.sends];
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled(pending),
      new Promise((resolve) => (timer = setTimeout(resolve, graceMs))),
    ]);
    clearTimeout(timer);
    const handedBack: string[] = [];
    for (const [id, held] of this.held) {
      const session = await held.ready.catch(() => undefined);
      if (!session) continue;
      handedBack.push(id);
      await session.close();
    }
    // The stopped sends answer now (session_stopped); wait for their releases.
    await Promise.allSettled([...this.sends]);
    return { settled: pending.length - handedBack.length, handedBack };
  }

  private refuseWhileDraining(): void {
    if (this.draining) throw new HttpError(503, 'server_stopping', 'This server is shutting down and takes no new work: send the request to another server, or retry in a moment.');
  }

  /** One Session object per id in this process, however many requests use it at once. */
  private hold(id: string): Held {
    const existing = this.held.get(id);
    if (existing) {
      existing.users += 1;
      return existing;
    }
    const ready = (async () => {
      const stored = await this.store.load(id);
      if (!stored) throw notFound(id);
      const state = snapshotState(storedSnapshot(this.runtime.machine, stored));
      if (state.startsWith('running')) {
        throw new HttpError(
          409,
          'session_running_elsewhere',
          `Session "${id}" is running (${state}) in another process. Wait until it waits for you (GET /sessions/${id}/stream tells you). ` +
            `If that process is gone, resume the session with \`steward run --session ${id}\` (the interrupted model call runs again).`,
        );
      }
      // Resume exactly what was checked: a second read could find it running by now.
      return this.runtime.resumeSession(id, { from: stored });
    })();
    ready.catch(() => {}); // handled by the request that awaits it
    const held: Held = { ready, users: 1 };
    this.held.set(id, held);
    return held;
  }

  private async release(id: string, held: Held): Promise<void> {
    held.users -= 1;
    if (held.users > 0) return;
    if (this.held.get(id) === held) this.held.delete(id);
    const session = await held.ready.catch(() => undefined);
    await session?.close();
  }
}

function notFound(id: string): HttpError {
  return new HttpError(404, 'session_not_found', `No session "${id}" in this store. List them with GET /sessions or create one with POST /sessions.`);
}
