/**
 * Read-only time travel: the state and context of a session at journal entry k, rebuilt by
 * replaying the journal's events 1..k through the pure machine. Nothing runs: invoked
 * actors are not started (their results are in the journal as `xstate.done.actor.*` /
 * `xstate.error.actor.*` events), and nothing is written.
 *
 * Why replay rather than storing a snapshot per entry: the journal already holds every
 * event, the store stays one snapshot per session, and replay checks itself — each
 * rebuilt state is compared with the state the journal recorded, and a difference is
 * reported (`divergedAt`), e.g. after the machine changed under an old session.
 * The machine's transitions are pure, and the times the context keeps (blackboard `at`,
 * rejections `at`) come with the journalled events, so the rebuilt context is the one the
 * session had.
 */
import type { AnyMachineSnapshot } from 'xstate';
import { snapshotState } from '../core/machines/refusals.js';
import type { SessionContext } from '../core/machines/session.context.js';
import { replayStep, startOf } from '../runtime/journal-replay.js';
import type { Runtime } from '../runtime/runtime.js';
import type { JournalEntry } from '../store/session-store.js';

export interface ReplayPoint {
  seq: number;
  snapshot: AnyMachineSnapshot;
  /** The first seq ≤ this one whose rebuilt state differs from the journal's record. */
  divergedAt?: number;
}

export { snapshotState };

/**
 * Replays journals with checkpoints, so stepping through a long timeline does not replay
 * from the start each time. A journal is append-only, so checkpoints never go stale.
 */
const MAX_SESSIONS_WITH_CHECKPOINTS = 16;

export class JournalReplayer {
  private readonly checkpoints = new Map<string, ReplayPoint[]>();

  constructor(
    private readonly runtime: Runtime,
    private readonly every = 50,
  ) {}

  /** The session at entry `seq` (1 = just created), from its journal `entries` (seq order, 1..≥seq). */
  at(sessionId: string, entries: readonly JournalEntry[], seq: number, current?: SessionContext): ReplayPoint {
    const created = entries[0];
    if (!created || created.seq !== 1) throw new Error(`The journal of "${sessionId}" does not start with its creation entry.`);
    const target = Math.max(1, Math.min(seq, entries.length));
    const saved = this.checkpoints.get(sessionId) ?? [];
    let point = [...saved].reverse().find((p) => p.seq <= target);
    if (!point) {
      const snapshot = startOf(this.runtime, sessionId, created, current);
      point = { seq: 1, snapshot, ...(snapshotState(snapshot) !== created.state ? { divergedAt: 1 } : {}) };
      saved.push(point);
    }
    let { snapshot, divergedAt } = point;
    for (let s = point.seq + 1; s <= target; s++) {
      const entry = entries[s - 1]!;
      snapshot = replayStep(this.runtime.machine, snapshot, entry);
      if (divergedAt === undefined && snapshotState(snapshot) !== entry.state) divergedAt = s;
      if (s % this.every === 0 && !saved.some((p) => p.seq === s)) saved.push({ seq: s, snapshot, ...(divergedAt !== undefined ? { divergedAt } : {}) });
    }
    saved.sort((a, b) => a.seq - b.seq);
    // Most recently used last; checkpoints hold whole snapshots, so only a few sessions keep them.
    this.checkpoints.delete(sessionId);
    this.checkpoints.set(sessionId, saved);
    if (this.checkpoints.size > MAX_SESSIONS_WITH_CHECKPOINTS) this.forget(this.checkpoints.keys().next().value!);
    return { seq: target, snapshot, ...(divergedAt !== undefined ? { divergedAt } : {}) };
  }

  forget(sessionId: string): void {
    this.checkpoints.delete(sessionId);
  }
}
