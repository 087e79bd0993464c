/**
 * Which copy of a session a request works on: this process's live one while it is current,
 * else the stored one (read-only for views; resumed here for a send, unless it is running —
 * perhaps in another process).
 */
import { storedSnapshot } from '../../runtime/persisted.js';
import type { Session } from '../../runtime/session.js';
import type { SessionSnapshot } from '../../core/machines/session-snapshot.js';
import type { UserEvent } from '../../core/machines/session.events.js';
import { sessionView, type SessionView } from '../../core/view.js';
import type { StoredSession } from '../../store/session-store.js';
import { snapshotState } from '../replay.js';
import type { InspectorContext } from './context.js';
import { sessionNotFound, sessionRunningElsewhere } from '../../http/errors.js';
import { ADMIN_GROUP } from '../../http/access.js';

/** After an accepted event, how long a POST waits for the session to settle before answering "still running". */
const SETTLE_GRACE_MS = 1_500;

/**
 * This process's session, if it is current: not stopped, and not behind the store (another
 * process wrote since; a session of ours still working may be ahead of its own writes).
 */
export function currentLive(ctx: InspectorContext, id: string, stored: StoredSession | undefined): Session | undefined {
  const live = ctx.runtime.live.get(id);
  if (!live || live.actorRef.getSnapshot().status === 'stopped') return undefined;
  const behind = stored !== undefined && live.revision !== undefined && stored.revision > live.revision;
  return behind && live.view().phase !== 'running' ? undefined : live;
}

export async function sessionPayload(ctx: InspectorContext, id: string) {
  const stored = await ctx.store.load(id);
  const live = currentLive(ctx, id, stored);
  if (!stored && !live) throw sessionNotFound(id, '');
  const snapshot: SessionSnapshot = live ? live.actorRef.getSnapshot() : storedSnapshot(ctx.runtime.machine, stored!);
  const view: SessionView = live ? live.view() : sessionView(snapshot, undefined, { dueAt: stored!.deadline?.dueAt ?? null });
  return {
    id,
    revision: stored?.revision ?? null,
    live: !!live,
    updatedAt: stored?.updatedAt ?? null,
    createdAt: stored?.createdAt ?? null,
    view,
    context: snapshot.context,
  };
}

/** The session to send to: ours if current; else the stored one, resumed here — unless it is running. */
async function sessionForSend(ctx: InspectorContext, id: string): Promise<Session> {
  const stored = await ctx.store.load(id);
  const live = currentLive(ctx, id, stored);
  if (live) return live;
  if (!stored) throw sessionNotFound(id, '');
  const state = snapshotState(storedSnapshot(ctx.runtime.machine, stored));
  if (state.startsWith('running')) {
    throw sessionRunningElsewhere(
      id,
      state,
      'Wait until it waits for you, or use "Resume here" if that process is gone (an interrupted model call runs again).',
    );
  }
  return ctx.runtime.resumeSession(id);
}

/**
 * Sends a user event. A refused event answers at once; an accepted one answers when the
 * session waits again, or — while a model (or a person playing it) takes its time — after a
 * grace period, with `settled: false` (the stream says when it settles).
 */
export async function sendEvent(ctx: InspectorContext, id: string, event: unknown) {
  const session = await sessionForSend(ctx, id);
  const before = snapshotState(session.actorRef.getSnapshot());
  // Watch for the move before sending: send() may process the event synchronously.
  let sub: { unsubscribe(): void } | null = null;
  const moved = new Promise<void>((resolveMoved) => {
    sub = session.actorRef.subscribe({
      next: (s) => {
        if (snapshotState(s) !== before) resolveMoved();
      },
      error: () => resolveMoved(),
    });
  });
  // A JSON body as sent: send() checks it and refuses what is malformed. It came by the inspector, whatever it says,
  // from the one who holds its page token and the database: it decides as admin (any wait's deciders take it).
  const sent = event && typeof event === 'object' && !Array.isArray(event) ? { ...event, groups: [ADMIN_GROUP], through: 'inspector' } : event;
  const sending = session.send(sent as UserEvent);
  ctx.inFlight.add(sending);
  void sending.finally(() => {
    sub?.unsubscribe();
    ctx.inFlight.delete(sending);
    ctx.hub.touch(id);
  });
  const settled = await Promise.race([
    sending.then((result) => ({ result })),
    moved.then(() => new Promise<null>((r) => setTimeout(() => r(null), SETTLE_GRACE_MS).unref())),
  ]);
  ctx.hub.touch(id);
  if (settled === null) return { ok: true, settled: false, view: session.view() };
  const { result } = settled;
  return result.ok ? { ok: true, settled: true, view: result.view } : { ok: false, settled: true, error: result.error, view: result.view };
}
