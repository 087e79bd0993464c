/**
 * Replaying a journal through the pure machine: the start of a session rebuilt from its
 * first entry, and each journalled event applied with `getNextSnapshot` (nothing runs: the
 * results of invoked actors are in the journal as `xstate.done.actor.*` / `xstate.error.actor.*`
 * events). Time travel (src/inspect/replay.ts) and forking (runtime.forkSession) both read
 * sessions this way, so a fork's state is exactly what time travel shows at that entry.
 */
import { getNextSnapshot, initialTransition, transition, type AnyStateMachine, type EventObject } from 'xstate';
import type { ChartEvent } from '../core/machines/session.reports.js';
import type { SessionSnapshot } from '../core/machines/session-snapshot.js';
import type { PackageInfo, SessionContext, SessionInput } from '../core/machines/session.context.js';
import type { SkillPackage } from '../skills/index.js';
import type { JournalEntry } from '../store/session-store.js';
import { resolvedSnapshot } from './persisted.js';

/** What the replay needs of a runtime: its machine and its packages. */
export interface ReplayHost {
  readonly machine: AnyStateMachine;
  readonly packages: ReadonlyMap<string, SkillPackage>;
}

/** The first entry of a fork: where it came from, and its whole starting snapshot (replay starts there). */
export interface ForkedPayload {
  forkedFrom: { id: string; seq: number };
  packageId: string | null;
  snapshot: unknown;
}

export const isForkEntry = (entry: JournalEntry): boolean => entry.kind === 'created' && entry.type === 'forked';

/** What the machine needs of a package; with `version`, the hash of the package version it comes from. */
export function packageInfoOf(pkg: Pick<SkillPackage, 'id' | 'title' | 'description' | 'workers' | 'deadlines'>, version?: string): PackageInfo {
  return {
    id: pkg.id,
    title: pkg.title,
    description: pkg.description,
    // A worker's approval policy, tools, deciders and deadlines only when they are not the
    // defaults: a package info stays as it was without them (old journals, snapshots compared by JSON).
    workers: pkg.workers.map(({ id, title, description, inputTags, outputTags, roles, approval, tools, approvers, reviewers, deadlines }) => ({
      id,
      title,
      description,
      inputTags,
      outputTags,
      roles,
      ...(approval !== 'model' ? { approval } : {}),
      ...(tools.length > 0 ? { tools } : {}),
      ...(approvers ? { approvers } : {}),
      ...(reviewers ? { reviewers } : {}),
      ...(deadlines ? { deadlines } : {}),
    })),
    ...(version !== undefined ? { version } : {}),
    ...(pkg.deadlines ? { deadlines: pkg.deadlines } : {}),
  };
}

/**
 * The input the session was created with, rebuilt from its first journal entry: the package
 * (and a legacy session's catalog) as journalled there, pinned to its version; a session
 * journalled before pinning gets its package as saved in the current snapshot, and a legacy
 * one the runtime's catalog.
 */
export function replayInput(host: ReplayHost, sessionId: string, created: JournalEntry, current: SessionContext | undefined): SessionInput {
  const payload = (created.payload ?? {}) as {
    packageId?: string | null;
    maxBurst?: number;
    maxBurstTokens?: number | null;
    window?: SessionInput['window'];
    blackboard?: SessionInput['blackboard'];
    package?: PackageInfo;
    catalog?: PackageInfo[];
  };
  const packageId = payload.packageId ?? null;
  const saved = current?.package && current.package.id === packageId ? current.package : undefined;
  const known = packageId === null ? undefined : host.packages.get(packageId);
  const pkg = packageId === null ? null : (payload.package ?? saved ?? (known ? packageInfoOf(known) : null));
  return {
    sessionId,
    package: pkg,
    catalog: packageId === null ? (payload.catalog ?? [...host.packages.values()].map((p) => packageInfoOf(p))) : [],
    ...(payload.maxBurst !== undefined ? { maxBurst: payload.maxBurst } : current ? { maxBurst: current.maxBurst } : {}),
    ...(payload.maxBurstTokens !== undefined ? { maxBurstTokens: payload.maxBurstTokens } : current ? { maxBurstTokens: current.ledger.maxBurstTokens } : {}),
    // The window limits and an app's seed tags, as createSession journalled them.
    ...(payload.window ? { window: payload.window } : current ? { window: current.transcripts.window } : {}),
    ...(payload.blackboard ? { blackboard: payload.blackboard } : {}),
  };
}

/** The session as its first entry made it: the initial state, or (a fork) the snapshot it was forked with. */
export function startOf(host: ReplayHost, sessionId: string, created: JournalEntry, current: SessionContext | undefined): SessionSnapshot {
  if (isForkEntry(created)) return resolvedSnapshot(host.machine, sessionId, (created.payload as ForkedPayload).snapshot);
  return initialTransition(host.machine, replayInput(host, sessionId, created, current))[0];
}

/** The journal's event as the machine saw it (an actor error was saved as `{ name, message }`). */
export function eventOf(entry: JournalEntry): EventObject {
  const event = entry.payload as EventObject & { error?: unknown };
  if (entry.type.startsWith('xstate.error.') && event.error && typeof event.error === 'object' && !(event.error instanceof Error)) {
    const { name, message } = event.error as { name?: string; message?: string };
    const error = new Error(message ?? 'unknown error');
    if (name) error.name = name;
    return { ...event, error } as EventObject;
  }
  return event;
}

/**
 * Whether the entry is a refusal `session.send()` decided before the machine saw the event
 * (malformed, a reserved name, over a limit: `{ type, refused }`, SessionJournal.refusal). The
 * machine never took it, so a replay skips it: applied, its type alone could be taken as a
 * decision (an approval without its fields).
 */
const refusedBeforeMachine = (entry: JournalEntry): boolean =>
  entry.kind === 'event' && typeof entry.payload === 'object' && entry.payload !== null && 'refused' in entry.payload;

/** One journalled event applied to `snapshot`, as the live actor applied it (a refusal the machine never saw changes nothing). */
export function replayStep(machine: AnyStateMachine, snapshot: SessionSnapshot, entry: JournalEntry): SessionSnapshot {
  if (refusedBeforeMachine(entry)) return snapshot;
  // getNextSnapshot rather than transition(): it gives actions `self.getSnapshot()` =
  // the state before the event, as a live actor does (the refusal log reads it).
  return getNextSnapshot(machine, snapshot, eventOf(entry));
}

/**
 * The events XState's actions emitted (a transition's or an initial transition's): their
 * types leave out the built-in emit, whose params are `{ event }`, the event resolved.
 *
 * @example
 * const [, actions] = initialTransition(machine, input);
 * emittedBy(actions); // [{ type: 'waiting', reason: 'intake', … }]
 */
export function emittedBy(actions: readonly { type: string; params?: unknown }[]): ChartEvent[] {
  return actions.flatMap((action) => (action.type === 'xstate.emit' ? [(action.params as { event: ChartEvent }).event] : []));
}

/**
 * One journalled event applied as `replayStep` applies it, with what the chart reported on
 * the way: the events its actions emitted, in order (XState's pure `transition` returns them
 * as actions instead of delivering them). The audit trail reads the waits and decisions from them.
 *
 * @example
 * const [next, reports] = replayReported(runtime.machine, snapshot, entry);
 * const decided = reports.filter((r) => r.type === 'decision');
 */
export function replayReported(machine: AnyStateMachine, snapshot: SessionSnapshot, entry: JournalEntry): [SessionSnapshot, ChartEvent[]] {
  if (refusedBeforeMachine(entry)) return [snapshot, []];
  const [next, actions] = transition(machine, snapshot, eventOf(entry));
  return [next as SessionSnapshot, emittedBy(actions as readonly { type: string; params?: unknown }[])];
}
