/**
 * What the chart says about user events, read from the chart itself: `readChart` looks at
 * the active state nodes' transitions (`StateNode.on`, public XState API) and at the guards
 * on them, evaluated with the same functions the machine's guards call (EVENT_GUARDS in
 * rules.ts). From that one reading come the events a state accepts (declares), the events
 * enabled now (some payload would pass its guard), and why a refused event is refused, with
 * the guard's own message. The root wildcard (the refusal log), `session.send()`, the view
 * and the inspector all use it, so none restates a guard.
 */
import type { AnyMachineSnapshot, AnyStateMachine, AnyStateNode, StateValue } from 'xstate';
import { EVENT_GUARDS, isEventGuardId, type EventGuardId } from './rules.js';
import type { SessionContext } from './session.context.js';
import { isUserEventType, type UserEvent, type UserEventType } from './session.events.js';
import { CLOSED_WAIT_GUARD } from './waits.js';
import { DECIDER_GUARD } from './deadlines.js';

/** Dotted state value, e.g. "waiting_user.review_artifact". */
export function stateString(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object') {
    const [key, child] = Object.entries(value)[0] ?? [];
    return key === undefined
      ? ''
      : child === undefined || (typeof child === 'object' && Object.keys(child as object).length === 0)
        ? key
        : `${key}.${stateString(child)}`;
  }
  return String(value);
}

/** "waiting_user.intake", or "done" for a finished session (as the journal writes it). */
export function snapshotState(snapshot: AnyMachineSnapshot): string {
  return snapshot.status === 'done' ? 'done' : stateString(snapshot.value);
}

/** The active state nodes for a state value, root first (the machine is not parallel). */
export function activeNodes(machine: AnyStateMachine, value: StateValue): AnyStateNode[] {
  const nodes: AnyStateNode[] = [machine.root];
  let node: AnyStateNode = machine.root;
  let rest: unknown = value;
  while (rest !== undefined && rest !== null) {
    const key: string | undefined = typeof rest === 'string' ? rest : Object.keys(rest as object)[0];
    if (key === undefined || !Object.hasOwn(node.states, key)) break;
    node = node.states[key]!;
    nodes.push(node);
    rest = typeof rest === 'string' ? undefined : (rest as Record<string, unknown>)[key];
  }
  return nodes;
}

/**
 * The active state nodes, root first, found by asking whether each child is active
 * (`isActive`: in an action, XState's `stateIn` check, since an action sees no snapshot).
 */
export function activeNodesAsked(machine: AnyStateMachine, isActive: (stateId: string) => boolean): AnyStateNode[] {
  const nodes: AnyStateNode[] = [machine.root];
  for (let node: AnyStateNode | undefined = machine.root; node;) {
    node = Object.values(node.states).find((child) => isActive(child.id));
    if (node) nodes.push(node);
  }
  return nodes;
}

/** A user-event transition as the chart declares it: the event and the guard's name, if any. */
interface Candidate {
  type: UserEventType;
  guard: EventGuardId | string | null;
}

function guardType(guard: unknown): string | null {
  if (guard === undefined || guard === null) return null;
  if (typeof guard === 'string') return guard;
  if (typeof guard === 'object' && typeof (guard as { type?: unknown }).type === 'string') return (guard as { type: string }).type;
  return 'inline';
}

/** What the chart declares at a set of active nodes. */
interface Declared {
  state: string;
  /** The user-event transitions, deepest node first (XState's order). */
  candidates: Candidate[];
  accepted: UserEventType[];
  /** Whether any accepted event has a guard (if none, every accepted event is enabled). */
  guarded: boolean;
}

function declaredAt(nodes: readonly AnyStateNode[]): Declared {
  const candidates: Candidate[] = [];
  for (const node of [...nodes].reverse()) {
    for (const [type, transitions] of Object.entries(node.on)) {
      if (!isUserEventType(type)) continue;
      for (const t of transitions as { guard?: unknown }[]) {
        const guard = guardType(t.guard);
        // The refusal of a decision for a closed wait, or by someone the wait does not name, is
        // no way to take the event: it neither makes an event accepted or enabled, nor explains another refusal.
        if (guard !== CLOSED_WAIT_GUARD && guard !== DECIDER_GUARD) candidates.push({ type, guard });
      }
    }
  }
  return {
    state:
      nodes
        .slice(1)
        .map((n) => n.key)
        .join('.') || 'done',
    candidates,
    accepted: [...new Set(candidates.map((c) => c.type))],
    guarded: candidates.some((c) => c.guard !== null),
  };
}

/** Null when the guard lets the event (or, with null, some event of that type) through. */
function guardRefusal(guard: string | null, context: SessionContext, event: UserEvent | null): string | null {
  if (guard === null) return null;
  // A guard outside the table (a user's own, via provide()) cannot be read here: the chart
  // offers its event, and the machine decides.
  return isEventGuardId(guard) ? EVENT_GUARDS[guard].refusal(context, event) : null;
}

function guardApplies(guard: string | null, context: SessionContext): boolean {
  return guard === null || !isEventGuardId(guard) || (EVENT_GUARDS[guard].applies?.(context) ?? true);
}

export interface ChartReading {
  /** Dotted state, "done" for a finished session. */
  state: string;
  /** The user events the active states declare a transition for (guards not evaluated). */
  accepted: UserEventType[];
  /** The accepted events whose guard would let some payload through now. */
  enabled: UserEventType[];
}

export interface Refusal extends ChartReading {
  eventType: string;
  /** Why, in words that name the fix: the guard's own message, or what is accepted now. */
  reason: string;
  /** The guard that said no, when the state declares the event. */
  guard?: string;
}

function describeState(state: string): string {
  if (state.startsWith('running')) return 'while the agents are working (wait until the session waits for you)';
  if (state === 'done') return 'because the session is done';
  return `while the session waits in ${state.replace('waiting_user.', '')}`;
}

/**
 * The one reading of the chart: for the active nodes and the context, what is accepted and
 * enabled; with an event, also whether it is refused and why (null: a transition takes it).
 */
export function readChart(nodes: readonly AnyStateNode[] | null, context: SessionContext): ChartReading;
export function readChart(nodes: readonly AnyStateNode[] | null, context: SessionContext, event: { type: string }): ChartReading & { refusal: Refusal | null };
export function readChart(nodes: readonly AnyStateNode[] | null, context: SessionContext, event?: { type: string }) {
  // No nodes: a finished or stopped session, which declares nothing.
  const { state, candidates, accepted, guarded } = declaredAt(nodes ?? []);
  const enabled = guarded ? accepted.filter((type) => candidates.some((c) => c.type === type && guardRefusal(c.guard, context, null) === null)) : [...accepted];
  const reading: ChartReading = { state, accepted, enabled };
  if (!event) return reading;
  const refusal = (reason: string, guard?: string): Refusal => ({ ...reading, eventType: event.type, reason, ...(guard ? { guard } : {}) });
  const own = candidates.filter((c) => c.type === event.type);
  if (own.length === 0) {
    const now = accepted.length ? ` Accepted now: ${accepted.join(', ')}.` : '';
    return { ...reading, refusal: refusal(`"${event.type}" is not accepted ${describeState(state)}.${now}`) };
  }
  // Declared here: refused only when every candidate's guard says no; the words of the first
  // one that applies to the session as it is (else the first one's).
  const userEvent = event as UserEvent;
  let first: { guard: string; reason: string } | null = null;
  let applying: { guard: string; reason: string } | null = null;
  for (const c of own) {
    const reason = guardRefusal(c.guard, context, userEvent);
    if (reason === null) return { ...reading, refusal: null };
    first ??= { guard: c.guard!, reason };
    if (!applying && guardApplies(c.guard, context)) applying = { guard: c.guard!, reason };
  }
  const said = applying ?? first!;
  return { ...reading, refusal: refusal(said.reason, said.guard) };
}

/**
 * The chart read at a snapshot (a finished or stopped session accepts nothing).
 *
 * @example
 * const { state, enabled, refusal } = readSnapshot(actor.getSnapshot(), { type: 'user_confirmed_intake' });
 * if (refusal) console.log(`${state} refuses it: ${refusal.reason}; try ${enabled.join(', ')}`);
 */
export function readSnapshot(snapshot: AnyMachineSnapshot): ChartReading;
export function readSnapshot(snapshot: AnyMachineSnapshot, event: { type: string }): ChartReading & { refusal: Refusal | null };
export function readSnapshot(snapshot: AnyMachineSnapshot, event?: { type: string }) {
  const nodes = snapshot.status === 'active' ? activeNodes(snapshot.machine, snapshot.value) : null;
  const context = snapshot.context as SessionContext;
  return event ? readChart(nodes, context, event) : readChart(nodes, context);
}

/**
 * The user events the active states declare a transition for (guards not evaluated).
 *
 * @example
 * acceptedUserEvents(actor.getSnapshot()); // e.g. ['user_accepted_artifact', 'user_rejected_artifact', 'user_answered_questions', …]
 */
export function acceptedUserEvents(snapshot: AnyMachineSnapshot): UserEventType[] {
  return readSnapshot(snapshot).accepted;
}

/**
 * The user events the session would take now, guards evaluated (a subset of `acceptedUserEvents`).
 *
 * @example
 * for (const type of enabledUserEvents(actor.getSnapshot())) renderButton(type); // what a UI should offer now
 */
export function enabledUserEvents(snapshot: AnyMachineSnapshot): UserEventType[] {
  return readSnapshot(snapshot).enabled;
}
