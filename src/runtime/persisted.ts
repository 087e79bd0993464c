/**
 * The persisted form of a session: XState's persisted snapshot inside an envelope with a
 * schema version, validated with zod on load. A row from a newer Steward, or one that is
 * not a session snapshot at all, is refused with a message naming the session.
 */
import type { AnyMachineSnapshot, AnyStateMachine } from 'xstate';
import { z } from 'zod';
import { ownRecord } from '../blackboard/keyed.js';
import { SnapshotError } from '../errors.js';
import type { StoredSession } from '../store/session-store.js';

/**
 * v1: the first. v2 (issue 12): the context's `usage` moves into `ledger` with the burst's
 * token count and budget and the fork origin; a v1 snapshot gets its usage in a ledger with
 * no budget and nothing counted for the burst, on load.
 */
export const SNAPSHOT_SCHEMA_VERSION = 2;

/** Migrations, by the version they upgrade from: each takes the snapshot of that version to the next. */
const MIGRATIONS: Readonly<Record<number, (snapshot: { context: Record<string, unknown> }) => void>> = {
  1: (snapshot) => {
    const { usage, ...rest } = snapshot.context as { usage?: unknown };
    snapshot.context = { ...rest, ledger: { usage: usage ?? { promptTokens: 0, completionTokens: 0 }, maxBurstTokens: null, burstTokens: 0, lastCallTokens: 0 } };
  },
};

const ContextSchema = z.looseObject({
  sessionId: z.string(),
  package: z.looseObject({ id: z.string(), workers: z.array(z.looseObject({ id: z.string(), outputTags: z.array(z.string()) })) }).nullable(),
  maxBurst: z.number().int().positive(),
  burst: z.number().int().nonnegative(),
  managerMessages: z.array(z.looseObject({ role: z.enum(['system', 'user', 'assistant', 'tool']) })),
  workerMessages: z.array(z.looseObject({ role: z.enum(['system', 'user', 'assistant', 'tool']) })),
  // ownRecord: z.record would drop a tag named "__proto__".
  blackboard: ownRecord(z.string(), z.array(z.looseObject({ version: z.number().int().positive(), body: z.string(), writtenBy: z.string() }))),
  artifacts: z.array(z.looseObject({ id: z.string(), workerId: z.string(), status: z.enum(['pending_review', 'accepted', 'rejected', 'superseded']) })),
  rejections: z.array(z.unknown()),
  ledger: z.looseObject({
    usage: z.looseObject({ promptTokens: z.number().nonnegative(), completionTokens: z.number().nonnegative() }),
    maxBurstTokens: z.number().int().positive().nullable(),
    burstTokens: z.number().int().nonnegative(),
    lastCallTokens: z.number().int().nonnegative(),
    forkedFrom: z.strictObject({ id: z.string(), seq: z.number().int().positive() }).optional(),
  }).optional(),
});

export const PersistedSessionSchema = z.strictObject({
  schemaVersion: z.number().int().positive(),
  snapshot: z.looseObject({
    status: z.enum(['active', 'done', 'error', 'stopped']),
    value: z.unknown(),
    context: ContextSchema,
  }),
});

export type PersistedSession = { schemaVersion: number; snapshot: unknown };

export function envelope(snapshot: unknown): PersistedSession {
  return { schemaVersion: SNAPSHOT_SCHEMA_VERSION, snapshot };
}

/** Validates a stored envelope; returns XState's persisted snapshot inside it. */
export function openEnvelope(sessionId: string, stored: unknown): unknown {
  const version = (stored as { schemaVersion?: unknown } | null)?.schemaVersion;
  if (typeof version === 'number' && version > SNAPSHOT_SCHEMA_VERSION) {
    throw new SnapshotError(`Session "${sessionId}" was saved by a newer Steward (snapshot schema v${version}; this one reads up to v${SNAPSHOT_SCHEMA_VERSION}). Upgrade Steward to open it.`);
  }
  const parsed = PersistedSessionSchema.safeParse(stored);
  if (!parsed.success) {
    const where = parsed.error.issues.slice(0, 3).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    throw new SnapshotError(`Session "${sessionId}" has a snapshot that is not a valid Steward session (${where}). It cannot be resumed; other sessions are unaffected.`);
  }
  const snapshot = parsed.data.snapshot as { context: Record<string, unknown> };
  for (let v = parsed.data.schemaVersion; v < SNAPSHOT_SCHEMA_VERSION; v++) MIGRATIONS[v]?.(snapshot);
  if (!snapshot.context.ledger) {
    throw new SnapshotError(`Session "${sessionId}" has a snapshot of schema v${parsed.data.schemaVersion} without its ledger (token usage): it is not a valid Steward session. It cannot be resumed; other sessions are unaffected.`);
  }
  return snapshot;
}

/**
 * A stored session's snapshot, to look at without running it: no actor starts, so a model
 * call that was in flight when it was saved is not made again (resume does that).
 */
export function storedSnapshot(machine: AnyStateMachine, stored: StoredSession): AnyMachineSnapshot {
  const persisted = openEnvelope(stored.id, stored.snapshot) as { value: unknown; context: unknown; status: string };
  return machine.resolveState({
    value: persisted.value as never,
    context: persisted.context as never,
    ...(persisted.status !== 'active' ? { status: persisted.status as never } : {}),
  }) as AnyMachineSnapshot;
}
