/**
 * A session's audit trail, built from its journal: one row per decision that answered a wait.
 * The journal is replayed through the pure machine (journal-replay.ts), and the rows come from
 * what the chart reports on the way — `waiting` (a wait opened, with its number), `decision`
 * (a person's event ended it, or a deadline did), `tool_call_decided` (one call of a tool wait
 * decided) — so nothing here decides what a state means. Who decided, and through what, is the
 * journalled event's own (`by`, `via`, `through`), or for a deadline the chart's (`by:
 * steward`, through `deadline`); what they were shown is the session's view as the wait
 * opened, hashed (`shownAtWait`). A refused event ended nothing: it is no row.
 */
import { createHash } from 'node:crypto';
import { SessionNotFoundError, UserError } from '../core/errors.js';
import { snapshotState } from '../core/machines/refusals.js';
import type { SessionContext } from '../core/machines/session.context.js';
import type { SessionSnapshot } from '../core/machines/session-snapshot.js';
import type { UserEventType } from '../core/machines/session.events.js';
import type { ChartEvent } from '../core/machines/session.reports.js';
import type { WaitingReason } from '../core/machines/stream-events.js';
import { canonicalJson } from '../core/text/canonical-json.js';
import { callsOfWait, isToolWait } from '../core/tools/server-tools.js';
import { sessionView, type SessionView } from '../core/view.js';
import { LIST_MAX_LIMIT } from '../store/list-page.js';
import type { JournalEntry, SessionStore, SessionSummary } from '../store/session-store.js';
import { AuditThroughSchema, type AuditDecision, type AuditRow } from './audit-row.js';
import { readJournal } from './journal-waits.js';
import { replayReported, startOf, type ReplayHost } from './journal-replay.js';
import { storedSnapshot } from './persisted.js';

/** The word each user event's decision is (a tool call's comes from the chart's `tool_call_decided`). */
const DECISION_OF: Record<UserEventType, AuditDecision> = {
  user_selected_package: 'selected',
  user_submitted_input: 'submitted',
  user_confirmed_intake: 'confirmed',
  user_approved_next_step: 'approved',
  user_rejected_next_step: 'rejected',
  user_accepted_artifact: 'accepted',
  user_rejected_artifact: 'rejected',
  user_answered_questions: 'answered',
  user_skipped_questions: 'skipped',
  user_approved_tool_call: 'approved',
  user_rejected_tool_call: 'rejected',
  user_answered_tool_input: 'answered',
  user_gave_tool_result: 'result_given',
};

/** A journalled event's envelope (who, when, which wait, through what) and what names the subject: not its details. */
const NOT_DETAILS = new Set(['type', 'at', 'by', 'via', 'groups', 'through', 'wait', 'artifactId', 'callId', 'edits', 'arguments']);

/**
 * What a wait showed the person deciding it, from the session's view as the wait opened: the
 * object whose canonical JSON `shownSha256` hashes. Its fields, each only when the view had it:
 * - `waitingReason`: the wait;
 * - `step` (approve_step): the proposed step's `workerId`, `roleId`, `reason`;
 * - `artifact` (review_artifact, revision): its `id`, `workerId`, `roleId`, and `tags` as
 *   `{ tag, version, body }` in the artifact's order;
 * - `message`, `assessment`: what the manager said; `questions`: `{ id, text }` each;
 * - `toolCall` (a tool wait, for the call decided): `callId`, `server`, `tool`, `arguments`,
 *   the tool's pinned `description`, and what its server asked (`input`: the requests of the view's `input`).
 *
 * @example
 * const hash = createHash('sha256').update(canonicalJson(shownAtWait(view))).digest('hex');
 */
export function shownAtWait(view: SessionView, callId?: string): Record<string, unknown> {
  const reason = view.waitingReason;
  const shown: Record<string, unknown> = { waitingReason: reason };
  const step = view.pendingStep;
  if (reason === 'approve_step' && step) shown.step = { workerId: step.workerId, roleId: step.roleId, reason: step.reason };
  const artifact = view.artifact;
  if (artifact) {
    shown.artifact = {
      id: artifact.id,
      workerId: artifact.workerId,
      roleId: artifact.roleId,
      tags: artifact.tags.map(({ tag, version, body }) => ({ tag, version, body })),
    };
  }
  if (view.message !== undefined) shown.message = view.message;
  if (view.assessment !== undefined) shown.assessment = view.assessment;
  if (view.questions) shown.questions = view.questions.map(({ id, text }) => ({ id, text }));
  const call = callId === undefined ? undefined : view.toolCalls?.find((c) => c.callId === callId);
  if (call) {
    const { server, tool, arguments: args, description, input } = call;
    shown.toolCall = { callId: call.callId, server, tool, arguments: args, description, input: input?.requests };
  }
  return shown;
}

/**
 * The hash of what a wait showed (`shownAtWait`): sha256, hex, of its canonical JSON.
 *
 * @example
 * shownSha256(session.view()); // '3f1c…' (64 hex digits)
 */
export function shownSha256(view: SessionView, callId?: string): string {
  return createHash('sha256')
    .update(canonicalJson(shownAtWait(view, callId)))
    .digest('hex');
}

/** A wait while it is open: where it opened and what it showed. */
interface OpenWait {
  wait: number;
  reason: WaitingReason;
  seq: number;
  at: string;
  view: SessionView;
}

type Payload = Record<string, unknown>;
const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);
const record = (value: unknown): Record<string, unknown> | null => (value && typeof value === 'object' && !Array.isArray(value) ? (value as Payload) : null);

function openedIn(snapshot: SessionSnapshot, entry: JournalEntry, reason: WaitingReason, wait: number): OpenWait {
  return { wait, reason, seq: entry.seq, at: entry.at, view: sessionView(snapshot) };
}

/** What a decision was about, by its wait: the step's worker, the artifact under review, the call. */
function subjectOf(open: OpenWait, callId: string | undefined): string | null {
  if (isToolWait(open.reason)) return callId ?? null;
  if (open.reason === 'approve_step') return open.view.pendingStep?.workerId ?? null;
  return open.view.artifact?.id ?? null;
}

/** A fan-out item's subject: a step's worker (as a single step's row says), an artifact's id. */
function itemSubject(open: OpenWait, item: string): string {
  return open.reason === 'approve_step' ? (open.view.team?.find((t) => t.item === item)?.workerId ?? item) : item;
}

/** A decision's row, as far as it is known when it is taken (the wait's close comes later for a tool wait). */
function rowOf(sessionId: string, open: OpenWait, entry: JournalEntry, decision: AuditDecision, callId?: string, item?: string): AuditRow {
  const payload = record(entry.payload) ?? {};
  const edits = record(payload.edits) ?? record(payload.arguments);
  const details = Object.fromEntries(Object.entries(payload).filter(([key, value]) => !NOT_DETAILS.has(key) && value !== undefined));
  // The event schema held it to the surfaces when it was sent; anything else (a hand-edited store) is not a surface.
  const through = AuditThroughSchema.safeParse(payload.through);
  return {
    sessionId,
    wait: open.wait,
    waitingReason: open.reason,
    openedSeq: open.seq,
    openedAt: open.at,
    decidedSeq: entry.seq,
    decidedAt: text(payload.at) ?? entry.at,
    closedSeq: null,
    closedAt: null,
    by: text(payload.by),
    via: text(payload.via),
    groups: Array.isArray(payload.groups) && payload.groups.every((g) => typeof g === 'string') ? (payload.groups as string[]) : null,
    through: through.success ? through.data : null,
    event: entry.type,
    decision,
    subject: item !== undefined ? itemSubject(open, item) : subjectOf(open, callId),
    edits,
    details: Object.keys(details).length ? details : null,
    shownSha256: shownSha256(open.view, callId),
  };
}

/**
 * The rows of a deadline that ended the open wait: expired (rejected) or escalated to another
 * group, by Steward. The rule is the one that was current before the event (`waits.deadline`
 * of the snapshot it was applied to); a tool wait's calls still undecided each get a row, as a
 * person's decisions on them would.
 */
function deadlineRows(sessionId: string, open: OpenWait, entry: JournalEntry, before: SessionSnapshot, by: string | null): AuditRow[] {
  const rule = before.context.waits.deadline;
  const decision: AuditDecision = rule?.outcome === 'escalate' ? 'escalated' : 'expired';
  const details = rule ? { level: rule.level, after: rule.after, ...(rule.to ? { to: rule.to } : {}) } : null;
  const calls = isToolWait(open.reason) ? callsOfWait(before.context.reply.toolCalls, open.reason).map((c) => c.callId) : [undefined];
  return calls.map((callId) => ({
    ...rowOf(sessionId, open, entry, decision, callId),
    by,
    via: null,
    groups: null,
    through: 'deadline' as const,
    edits: null,
    details,
  }));
}

/**
 * The audit rows of one session, from its whole journal (seq order, from entry 1), in the
 * order the decisions were taken; `current` is the stored context (replay reads a package
 * from it for sessions journalled before packages were pinned). Throws a `UserError` when the
 * journal no longer replays to the states it recorded (the machine changed since).
 *
 * @example
 * for (const row of auditRows(runtime, id, await readJournal(store, id))) console.log(row.decision, row.by);
 */
export function* auditRows(host: ReplayHost, sessionId: string, entries: readonly JournalEntry[], current?: SessionContext): Generator<AuditRow> {
  const created = entries[0];
  if (!created) return;
  let snapshot = startOf(host, sessionId, created, current);
  const start = snapshotState(snapshot);
  // A wait open from the start: the first one of a new session, or the one a fork started in.
  let open: OpenWait | null = start.startsWith('waiting_user.')
    ? openedIn(snapshot, created, start.slice('waiting_user.'.length) as WaitingReason, snapshot.context.waits.opened)
    : null;
  // The decisions of the open wait, held until it closes (a tool wait takes one per call).
  let held: AuditRow[] = [];
  for (const entry of entries.slice(1)) {
    const [next, reports] = replayReported(host.machine, snapshot, entry);
    if (snapshotState(next) !== entry.state) {
      throw new UserError(
        `The journal of session "${sessionId}" does not replay on this Steward: entry ${entry.seq} gives ${snapshotState(next)}, ` +
          `the journal recorded ${entry.state} (the machine changed since it was written). Read its trail with the Steward version that wrote it.`,
      );
    }
    const before = snapshot;
    snapshot = next;
    if (open) {
      const calls = reports.filter((r): r is Extract<ChartEvent, { type: 'tool_call_decided' }> => r.type === 'tool_call_decided');
      for (const call of calls) held.push(rowOf(sessionId, open, entry, call.decision, call.callId));
      // A fan-out's items are decided one by one (each a row); the decision on the last one ends the wait.
      const decisions = reports.filter((r): r is Extract<ChartEvent, { type: 'decision' }> => r.type === 'decision');
      const items = decisions.filter((d) => d.item !== undefined && d.eventType !== 'deadline_passed');
      for (const d of items) held.push(rowOf(sessionId, open, entry, DECISION_OF[d.eventType as UserEventType], undefined, d.item));
      const ended = next.context.waits.opened !== open.wait || !snapshotState(next).startsWith('waiting_user.');
      const closed = decisions.find((d) => d.item === undefined || d.eventType === 'deadline_passed') ?? (ended ? items.at(-1) : undefined);
      if (closed) {
        if (closed.eventType === 'deadline_passed') held.push(...deadlineRows(sessionId, open, entry, before, closed.by));
        else if (calls.length === 0 && items.length === 0) held.push(rowOf(sessionId, open, entry, DECISION_OF[closed.eventType as UserEventType]));
        for (const row of held) yield { ...row, closedSeq: entry.seq, closedAt: text(record(entry.payload)?.at) ?? entry.at };
        held = [];
        open = null;
      }
    }
    const waiting = reports.findLast((r): r is Extract<ChartEvent, { type: 'waiting' }> => r.type === 'waiting');
    if (waiting && waiting.wait !== open?.wait) open = openedIn(next, entry, waiting.reason, waiting.wait);
  }
  yield* held;
}

/**
 * The audit rows of a stored session: its journal read whole, replayed on `host`.
 *
 * @example
 * const rows = [...(await sessionAuditRows(runtime, store, id))];
 */
export async function sessionAuditRows(host: ReplayHost, store: SessionStore, id: string): Promise<Iterable<AuditRow>> {
  const stored = await store.load(id);
  if (!stored) throw new SessionNotFoundError(id);
  const entries = await readJournal(store, id);
  return auditRows(host, id, entries, storedSnapshot(host.machine, stored).context);
}

/** How `auditRowsSince` tells how far it got, and what it skipped. */
export interface AuditWalk {
  /** After each session read (its rows given): how many sessions so far. */
  onSession?: (read: number, session: SessionSummary) => void;
  /** A session whose trail cannot be read (its journal no longer replays): skipped, the walk goes on. */
  onError?: (session: SessionSummary, error: unknown) => void;
}

/**
 * The rows of every session updated at or after `since` whose decision was taken at or after
 * it: the sessions most recently updated first (the store's list order, page by page, read
 * until a session updated before `since`), each session's rows in the order they were taken.
 * One session's journal is in memory at a time.
 *
 * @example
 * for await (const row of auditRowsSince(runtime, store, new Date('2026-01-01'))) out.write(auditLine(row, 'csv'));
 */
export async function* auditRowsSince(host: ReplayHost, store: SessionStore, since: Date, walk: AuditWalk = {}): AsyncGenerator<AuditRow> {
  const from = since.getTime();
  let after: string | null = null;
  let read = 0;
  do {
    const page = await store.list({ limit: LIST_MAX_LIMIT, after });
    for (const session of page.sessions) {
      if (Date.parse(session.updatedAt) < from) return;
      let rows: AuditRow[];
      try {
        rows = [...(await sessionAuditRows(host, store, session.id))];
      } catch (error) {
        walk.onError?.(session, error);
        continue;
      }
      for (const row of rows) if (Date.parse(row.decidedAt) >= from) yield row;
      walk.onSession?.(++read, session);
    }
    after = page.next;
  } while (after !== null);
}
