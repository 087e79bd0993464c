/**
 * The persisted form of a session: XState's persisted snapshot inside an envelope with a
 * schema version, validated with zod on load. A row from a newer Steward, or one that is
 * not a session snapshot at all, is refused with a message naming the session. A row of an
 * older schema is migrated (MIGRATIONS) before it is validated.
 */
import type { AnyStateMachine, StateValue } from 'xstate';
import type { SessionSnapshot } from '../core/machines/session-snapshot.js';
import * as z from 'zod';
import { hasBody, REQUEST_TAG, type Blackboard, type TagSlot } from '../core/blackboard/blackboard.js';
import type { Artifact } from '../core/blackboard/artifacts.js';
import { ownRecord } from '../core/blackboard/keyed.js';
import { SnapshotError } from '../core/errors.js';
import { ApprovalPolicySchema } from '../core/skills/package-schema.js';
import { DEADLINE_OUTCOMES, GroupNameSchema, IntervalSchema } from '../core/machines/deadlines.js';
import { stateString } from '../core/machines/refusals.js';
import { BRANCH_STATUSES } from '../core/machines/team.js';
import { transcriptOf, type WindowLimits } from '../core/machines/transcript.js';
import type { ChatMessage } from '../core/models/model.js';
import type { ArchiveItemInput, StoredSession } from '../store/session-store.js';
import { sessionView, type SessionView } from '../core/view.js';
import { PACKAGE_HASH_PATTERN } from '../skills/package-version.js';
import { withContextInputs, withoutContextInputs } from './context-inputs.js';

/**
 * v1: the whole transcripts and every tag version's body in the context.
 * v2: bounded windows (`transcripts`), archived tag versions without bodies, the request in parts.
 * v3: the context's `usage` moves into `ledger`, with the burst's token count and
 *   budget and the fork origin; a v2 context gets its usage in a ledger with no budget.
 * v4: a tag's archived versions are counted in one summary `{archived, size}` first in its
 *   list instead of an entry each (the context is bounded however many versions a tag gets);
 *   window limits stay as saved.
 * v5: the context's `package` names the package version the session is pinned to
 *   (`version`, a sha256); a v4 context has none, and the runtime pins it to the package on
 *   disk when it is first resumed (the disk is no migration's business).
 * v6: a step carries the approval policy's answer for it (`step.approval`); a v5 step gets
 *   `model`, the only rule there was (the manager's requiresApproval decided).
 * v7: the context numbers the waits (`waits`: the latest one opened, and the decision that
 *   closed the latest answered one); a v6 context starts at wait 1 with no answer kept.
 * v8: the waits say the open wait's deadline (the rule of its chain that is current) and who
 *   may decide it (`waits.deadline`, `waits.deciders`); a v7 wait has neither.
 * v9: the model calls are counted in the ledger (`ledger.rounds`, was `rounds`), and a fan-out
 *   of independent workers is kept with its branches (`team`, team.ts); a v8 context has none.
 * v10: a running model turn is saved without its input when that is the context itself
 *   (context-inputs.ts); the context is unchanged, and a v9 child with its input loads as it is.
 */
export const SNAPSHOT_SCHEMA_VERSION = 10;

const Role = z.enum(['system', 'user', 'assistant', 'tool']);
const TranscriptSchema = z.looseObject({
  messages: z.array(z.looseObject({ role: Role })),
  chars: z.number().int().nonnegative(),
  total: z.number().int().nonnegative(),
  omitted: z.number().int().nonnegative(),
});
// One object schema with a check rather than a union: a union tries the first shape and
// builds its errors before it tries the second (measured: most of a resume's validation).
const TagSlotSchema = z
  .looseObject({
    version: z.number().int().positive().optional(),
    writtenBy: z.string().optional(),
    body: z.string().optional(),
    archived: z.number().int().positive().optional(),
    size: z.number().int().nonnegative().optional(),
  })
  .refine(
    (v) =>
      (v.body !== undefined && v.version !== undefined && v.writtenBy !== undefined && v.archived === undefined) ||
      (v.body === undefined && v.archived !== undefined && v.size !== undefined),
    'a tag version needs version, writtenBy and body; a summary of archived versions needs archived and size',
  );
// [summary?, ...versions with bodies]: a summary only first, the latest version (with its body) last.
const TagListSchema = z
  .array(TagSlotSchema)
  .refine(
    (list) => list.length > 0 && list.at(-1)!.body !== undefined && list.every((v, i) => i === 0 || v.body !== undefined),
    'a tag lists its versions with bodies, the latest last, after at most one summary of archived versions',
  );

const StepSchema = z.looseObject({ workerId: z.string(), requiresApproval: z.boolean(), approval: ApprovalPolicySchema });

const ContextSchema = z.looseObject({
  sessionId: z.string(),
  package: z
    .looseObject({
      id: z.string(),
      workers: z.array(z.looseObject({ id: z.string(), outputTags: z.array(z.string()) })),
      version: z.string().regex(PACKAGE_HASH_PATTERN, 'must be "sha256:" and 64 hex digits').optional(),
    })
    .nullable(),
  maxBurst: z.number().int().positive(),
  burst: z.number().int().nonnegative(),
  transcripts: z.looseObject({
    manager: TranscriptSchema,
    worker: TranscriptSchema,
    window: z.looseObject({ messages: z.number().int().positive(), chars: z.number().int().positive() }),
  }),
  // ownRecord: z.record would drop a tag named "__proto__".
  blackboard: ownRecord(z.string(), TagListSchema),
  artifacts: z.array(z.looseObject({ id: z.string(), workerId: z.string(), status: z.enum(['pending_review', 'accepted', 'rejected', 'superseded']) })),
  rejections: z.array(z.unknown()),
  step: StepSchema.nullable(),
  // A fan-out under way (team.ts); a branch is focused only within one transition, never in a snapshot.
  team: z
    .looseObject({
      since: z.number().int().nonnegative(),
      branches: z
        .array(z.looseObject({ item: z.string().min(1).max(200), step: StepSchema, status: z.enum(BRANCH_STATUSES), transcript: TranscriptSchema }))
        .min(1),
      focus: z.null(),
    })
    .nullable(),
  ledger: z.looseObject({
    usage: z.looseObject({ promptTokens: z.number().nonnegative(), completionTokens: z.number().nonnegative() }),
    maxBurstTokens: z.number().int().positive().nullable(),
    burstTokens: z.number().int().nonnegative(),
    lastCallTokens: z.number().int().nonnegative(),
    rounds: z.number().int().nonnegative(),
    forkedFrom: z.strictObject({ id: z.string(), seq: z.number().int().positive() }).optional(),
  }),
  waits: z.strictObject({
    opened: z.number().int().nonnegative(),
    answered: z.strictObject({ wait: z.number().int().positive(), digest: z.string().max(64) }).nullable(),
    deadline: z
      .strictObject({
        level: z.number().int().nonnegative(),
        after: IntervalSchema,
        outcome: z.enum(DEADLINE_OUTCOMES),
        to: GroupNameSchema.optional(),
      })
      .nullable(),
    deciders: z.array(GroupNameSchema).nullable(),
  }),
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

/** XState's persisted snapshot in the versioned envelope, as the store saves it. */
export function envelope(snapshot: unknown): PersistedSession {
  return { schemaVersion: SNAPSHOT_SCHEMA_VERSION, snapshot: withoutContextInputs(snapshot) };
}

/**
 * A session's envelope: XState's persisted snapshot (`getPersistedSnapshot`), with the context
 * the actor holds saved as it is. XState's own persisting of a context (`persistContext`)
 * takes any object with the keys `sessionId`, `send` and `ref` for an actor reference and
 * saves a marker in its place: a record keyed by names an app or a package chose (tool
 * variables, tags) with those three would be lost, the whole record with them. A session's
 * context holds no actor reference (its model and tool calls are the actor's children), so
 * XState is handed the snapshot without its context: it does not walk a context it would not
 * keep.
 *
 * @example
 * const saved = sessionEnvelope(actor.logic, actor.getSnapshot());
 */
export function sessionEnvelope(machine: AnyStateMachine, snapshot: SessionSnapshot): PersistedSession {
  const persisted = machine.getPersistedSnapshot({ ...snapshot, context: undefined } as never) as Record<string, unknown>;
  return envelope({ ...persisted, context: snapshot.context });
}

/** A migration step: the context of version n → n + 1, plus the history it moved out of the context. */
type Migration = (context: Record<string, unknown>) => { context: Record<string, unknown>; history: ArchiveItemInput[] };

const isArray = (x: unknown): x is unknown[] => Array.isArray(x);

/**
 * v1 → v2. The transcripts become windows (cut to the default limits); every message and tag
 * version of the old context goes to the archive (`history`), so nothing is lost when the
 * migrated session is saved; the request's versions, which each repeated all earlier text,
 * become parts holding only what each added; bodies the context no longer needs leave it.
 */
function v1ToV2(old: Record<string, unknown>): { context: Record<string, unknown>; history: ArchiveItemInput[] } {
  const { managerMessages, workerMessages, ...rest } = old;
  const manager = (isArray(managerMessages) ? managerMessages : []) as ChatMessage[];
  const worker = (isArray(workerMessages) ? workerMessages : []) as ChatMessage[];
  const history: ArchiveItemInput[] = [
    ...manager.map((value, n) => ({ kind: 'message' as const, key: 'manager', n, value })),
    ...worker.map((value, n) => ({ kind: 'message' as const, key: 'worker', n, value })),
  ];
  const board: Blackboard = {};
  const oldBoard = old.blackboard && typeof old.blackboard === 'object' ? (old.blackboard as Record<string, unknown>) : {};
  for (const tag of Object.keys(oldBoard)) {
    const versions = oldBoard[tag];
    if (!isArray(versions)) {
      board[tag] = versions as TagSlot[]; // left for the schema to refuse
      continue;
    }
    board[tag] = versions.map((v, i) => {
      const slot = v as TagSlot;
      if (tag !== REQUEST_TAG || i === 0 || !hasBody(slot)) return slot;
      const before = versions[i - 1] as TagSlot;
      const prefix = hasBody(before) ? `${before.body}\n\n` : undefined;
      return prefix && slot.body.startsWith(prefix) ? { ...slot, body: slot.body.slice(prefix.length) } : slot;
    });
    for (const slot of board[tag]) if (hasBody(slot)) history.push({ kind: 'version', key: tag, n: slot.version, value: slot });
  }
  const artifacts = (isArray(old.artifacts) ? old.artifacts : []) as Artifact[];
  return {
    context: {
      ...rest,
      transcripts: { manager: transcriptOf(manager, V3_DEFAULT_WINDOW), worker: transcriptOf(worker, V3_DEFAULT_WINDOW), window: V3_DEFAULT_WINDOW },
      blackboard: retainBodiesV3(board, artifacts),
    },
    history,
  };
}

/** MIGRATIONS[n] takes a snapshot's context from schema version n to n + 1. Append only. */
/** v2 → v3: `usage` moves into `ledger` (no budget, nothing counted for the burst); nothing leaves the context. */
function v2ToV3(old: Record<string, unknown>): { context: Record<string, unknown>; history: ArchiveItemInput[] } {
  const { usage, ...rest } = old;
  return {
    context: { ...rest, ledger: { usage: usage ?? { promptTokens: 0, completionTokens: 0 }, maxBurstTokens: null, burstTokens: 0, lastCallTokens: 0 } },
    history: [],
  };
}

/** The window limits every session had by default up to v3. */
const V3_DEFAULT_WINDOW: WindowLimits = { messages: 60, chars: 32_000 };

/** v2's rule of retainBodies: a version whose body leaves keeps an entry of its own. */
/** A v3 entry of a version whose body left the context: its own line, no body. */
interface V3ArchivedVersion {
  version: number;
  writtenBy: string;
  artifactId?: string;
  size: number;
  archived: true;
}

function retainBodiesV3(board: Blackboard, artifacts: readonly Artifact[]): Record<string, (TagSlot | V3ArchivedVersion)[]> {
  const needed = new Set<string>();
  for (const a of artifacts) {
    if (a.status === 'pending_review' || a.status === 'rejected') for (const [tag, version] of Object.entries(a.tags)) needed.add(`${version}\u0000${tag}`);
  }
  return Object.fromEntries(
    Object.entries(board).map(([tag, versions]) => [
      tag,
      versions.map((v, i) =>
        !hasBody(v) || i === versions.length - 1 || needed.has(`${v.version}\u0000${tag}`)
          ? v
          : ({
              version: v.version,
              writtenBy: v.writtenBy,
              ...(v.artifactId ? { artifactId: v.artifactId } : {}),
              size: v.body.length,
              archived: true as const,
            } satisfies V3ArchivedVersion),
      ),
    ]),
  );
}

/**
 * v3 → v4: a tag's archived entries (`{version, writtenBy, size, archived: true}`, one per
 * version) become one summary `{archived: count, size: total}` first in its list; their
 * bodies are in the archive already, so nothing leaves the context's history. The window
 * limits stay as stored: v3's default (60 messages) cannot be told apart from an app that
 * chose the same limits, and a session's window must not shrink behind its app's back; only
 * new sessions get today's default.
 */
function v3ToV4(old: Record<string, unknown>): { context: Record<string, unknown>; history: ArchiveItemInput[] } {
  // Entries, not `board[tag] =`: a tag named "__proto__" must stay an own key.
  const board: [string, unknown][] = [];
  const oldBoard = old.blackboard && typeof old.blackboard === 'object' ? (old.blackboard as Record<string, unknown>) : {};
  for (const tag of Object.keys(oldBoard)) {
    const versions = oldBoard[tag];
    if (!isArray(versions)) {
      board.push([tag, versions]); // left for the schema to refuse
      continue;
    }
    const held = versions.filter((v) => !(v && typeof v === 'object' && (v as { archived?: unknown }).archived === true));
    const archived = versions.filter((v) => !held.includes(v)) as { size?: unknown }[];
    const size = archived.reduce((n, v) => n + (typeof v.size === 'number' ? v.size : 0), 0);
    board.push([tag, archived.length ? [{ archived: archived.length, size }, ...held] : held]);
  }
  return { context: { ...old, blackboard: Object.fromEntries(board) }, history: [] };
}

/** v4 → v5: nothing to change; `package.version` is optional, set when the session is first resumed (runtime.ts, pinToDisk). */
const v4ToV5: Migration = (context) => ({ context, history: [] });

/** v5 → v6: the step (if any) gets the approval policy's answer `model`: before v6 the manager's requiresApproval decided alone. */
function v5ToV6(old: Record<string, unknown>): { context: Record<string, unknown>; history: ArchiveItemInput[] } {
  const step = old.step;
  if (!step || typeof step !== 'object') return { context: old, history: [] };
  return { context: { ...old, step: { ...step, approval: 'model' } }, history: [] };
}

/**
 * v6 → v7: the waits are numbered from here on. Wait 1 is the open one (or the last one, for a
 * session that runs or is done); no decision is kept, so a repeat of the last one before the
 * migration is refused as naming a closed wait rather than reported as a repeat.
 */
const v6ToV7: Migration = (context) => ({ context: { ...context, waits: { opened: 1, answered: null } }, history: [] });

/** v7 → v8: the open wait (if any) has no deadline and names no deciders: it waits as it did. */
const v7ToV8: Migration = (context) => {
  const waits = context.waits as Record<string, unknown> | undefined;
  return { context: { ...context, waits: { ...waits, deadline: null, deciders: null } }, history: [] };
};

/** v8 → v9: the count of model calls moves into `ledger` (`rounds`); no fan-out is under way (`team`). */
const v8ToV9: Migration = ({ rounds, ...context }) => {
  const ledger = context.ledger as Record<string, unknown> | undefined;
  return { context: { ...context, ledger: { ...ledger, rounds: typeof rounds === 'number' ? rounds : 0 }, team: null }, history: [] };
};

/** v9 → v10: nothing to change in the context (a v9 child keeps the input it was saved with). */
const v9ToV10: Migration = (context) => ({ context, history: [] });

const MIGRATIONS: Record<number, Migration> = { 1: v1ToV2, 2: v2ToV3, 3: v3ToV4, 4: v4ToV5, 5: v5ToV6, 6: v6ToV7, 7: v7ToV8, 8: v8ToV9, 9: v9ToV10 };

export interface OpenedEnvelope {
  /** XState's persisted snapshot, at the current schema version. */
  snapshot: unknown;
  /** Set when the envelope was migrated: the history the migration moved out of the context, to archive. */
  migratedHistory?: ArchiveItemInput[];
}

/** Validates a stored envelope (migrating an older one); returns XState's persisted snapshot inside it. */
export function openEnvelope(sessionId: string, stored: unknown): unknown {
  return openEnvelopeWithHistory(sessionId, stored).snapshot;
}

export function openEnvelopeWithHistory(sessionId: string, stored: unknown): OpenedEnvelope {
  return validEnvelope(sessionId, stored);
}

/** XState's persisted snapshot as PersistedSessionSchema checked it (the context is checked in part, its other fields kept). */
type ValidSnapshot = z.infer<typeof PersistedSessionSchema>['snapshot'];

function validEnvelope(sessionId: string, stored: unknown): { snapshot: ValidSnapshot; migratedHistory?: ArchiveItemInput[] } {
  const version = (stored as { schemaVersion?: unknown } | null)?.schemaVersion;
  if (typeof version === 'number' && version > SNAPSHOT_SCHEMA_VERSION) {
    throw new SnapshotError(
      `Session "${sessionId}" was saved by a newer Steward (snapshot schema v${version}; this one reads ` +
        `up to v${SNAPSHOT_SCHEMA_VERSION}). Upgrade Steward to open it.`,
    );
  }
  let current = stored;
  let migratedHistory: ArchiveItemInput[] | undefined;
  if (typeof version === 'number' && Number.isInteger(version) && version >= 1 && version < SNAPSHOT_SCHEMA_VERSION) {
    const snapshot = (stored as { snapshot?: { context?: unknown } }).snapshot;
    if (snapshot && typeof snapshot === 'object' && snapshot.context && typeof snapshot.context === 'object') {
      let context = snapshot.context as Record<string, unknown>;
      migratedHistory = [];
      for (let v = version; v < SNAPSHOT_SCHEMA_VERSION; v++) {
        const step = MIGRATIONS[v]!(context);
        context = step.context;
        migratedHistory.push(...step.history);
      }
      current = { schemaVersion: SNAPSHOT_SCHEMA_VERSION, snapshot: { ...snapshot, context } };
    }
  }
  const parsed = PersistedSessionSchema.safeParse(current);
  if (!parsed.success || parsed.data.schemaVersion !== SNAPSHOT_SCHEMA_VERSION) {
    const where = parsed.success
      ? `schemaVersion: ${String(version)} is not a version this Steward knows`
      : parsed.error.issues
          .slice(0, 3)
          .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
          .join('; ');
    throw new SnapshotError(
      `Session "${sessionId}" has a snapshot that is not a valid Steward session (${where}). It cannot be resumed; other sessions are unaffected.`,
    );
  }
  return { snapshot: withContextInputs(parsed.data.snapshot), ...(migratedHistory ? { migratedHistory } : {}) };
}

/**
 * A stored snapshot as a resumed actor can start from. An earlier Steward could save the
 * snapshot of an actor stopped while its writes were queued (status "stopped", its invoked
 * model call gone): waiting or done, nothing was lost and it resumes as it was; running, the
 * call that should run again is missing, so it is refused, naming the fork that rebuilds it
 * from the journal.
 */
export function resumable(sessionId: string, opened: unknown): unknown {
  const snapshot = opened as ValidSnapshot; // as openEnvelopeWithHistory checked it
  if (snapshot.status !== 'stopped') return snapshot;
  const state = stateString(snapshot.value);
  if (!state.startsWith('running')) return { ...snapshot, status: state === 'done' ? 'done' : 'active' };
  throw new SnapshotError(
    `Session "${sessionId}" was saved while it ran but after it had been stopped (by an earlier Steward), so the model ` +
      `call it was making is not in its snapshot and it cannot be resumed. Its journal has every step: ` +
      `\`steward fork ${sessionId} --at SEQ\` (runtime.forkSession), with SEQ its last entry in \`steward log ${sessionId}\`, makes a new session in that state that runs the call again.`,
  );
}

/**
 * A stored session's snapshot, to look at without running it: no actor starts, so a model
 * call that was in flight when it was saved is not made again (resume does that).
 */
export function storedSnapshot(machine: AnyStateMachine, stored: StoredSession): SessionSnapshot {
  return resolvedSnapshot(machine, stored.id, stored.snapshot);
}

/**
 * A stored session's view, as a reader that does not run it sees it: with the due time of its
 * open wait's deadline from the store (the chart knows none).
 *
 * @example
 * const view = storedView(runtime.machine, await store.load(id));
 */
export function storedView(machine: AnyStateMachine, stored: StoredSession, packageOnDisk?: (packageId: string) => string | undefined): SessionView {
  return storedState(machine, stored, packageOnDisk).view;
}

/**
 * A stored session's snapshot and its view (as `storedView`), for a reader that needs both (the
 * context beside the view: a protocol's artifacts, its pending call).
 *
 * @example
 * const { snapshot, view } = storedState(runtime.machine, await store.load(id));
 */
export function storedState(
  machine: AnyStateMachine,
  stored: StoredSession,
  packageOnDisk?: (packageId: string) => string | undefined,
): { snapshot: SessionSnapshot; view: SessionView } {
  const snapshot = storedSnapshot(machine, stored);
  return { snapshot, view: sessionView(snapshot, packageOnDisk, { dueAt: stored.deadline?.dueAt ?? null }) };
}

/**
 * The one way from a persisted envelope (JSON from the store or a journal entry) to a typed
 * snapshot: validated and migrated by `openEnvelopeWithHistory`, then resolved by the machine.
 */
export function resolvedSnapshot(machine: AnyStateMachine, sessionId: string, persisted: unknown): SessionSnapshot {
  const opened = validEnvelope(sessionId, persisted).snapshot;
  return machine.resolveState({
    // The schema leaves the state value open (z.unknown): resolveState is what checks it against the chart.
    value: opened.value as StateValue,
    context: opened.context,
    ...(opened.status !== 'active' ? { status: opened.status } : {}),
  });
}
