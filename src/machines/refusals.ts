/**
 * Why a user event was refused, in words that name the fix. Used by the machine's
 * root-level wildcard handler (so the refusal lands in `context.rejections`) and by the
 * runtime (so `send()` returns the same message).
 */
import type { AnyMachineSnapshot } from 'xstate';
import type { SessionContext } from './session.context.js';
import { isUserEventType, type UserEventType } from './session.events.js';

/** Dotted state value, e.g. "waiting_user.review_artifact". */
export function stateString(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object') {
    const [key, child] = Object.entries(value)[0] ?? [];
    return key === undefined ? '' : child === undefined || (typeof child === 'object' && Object.keys(child as object).length === 0) ? key : `${key}.${stateString(child)}`;
  }
  return String(value);
}

// The machine's structure never changes, so the answer per set of active nodes is cached.
const acceptedCache = new WeakMap<object, UserEventType[]>();

/** "waiting_user.intake", or "done" for a finished session (as the journal writes it). */
export function snapshotState(snapshot: AnyMachineSnapshot): string {
  return snapshot.status === 'done' ? 'done' : stateString(snapshot.value);
}

/** The user events that the active states declare a transition for (guards not evaluated). */
export function acceptedUserEvents(snapshot: AnyMachineSnapshot): UserEventType[] {
  if (snapshot.status !== 'active') return [];
  const leaf = snapshot._nodes[snapshot._nodes.length - 1];
  const cached = leaf && acceptedCache.get(leaf);
  if (cached) return [...cached];
  const types = new Set<UserEventType>();
  for (const node of snapshot._nodes) {
    for (const type of node.ownEvents) if (isUserEventType(type)) types.add(type);
  }
  const list = [...types];
  if (leaf) acceptedCache.set(leaf, list);
  return [...list];
}

/** A representative event of `type`, with the payload the current context makes sensible. */
function sampleEvent(type: UserEventType, context: SessionContext): { type: string } & Record<string, unknown> {
  switch (type) {
    case 'user_selected_package': return { type, packageId: context.catalog[0]?.id ?? '' };
    case 'user_submitted_input': return { type, text: '…' };
    case 'user_accepted_artifact':
    case 'user_rejected_artifact':
      return { type, artifactId: context.artifacts.find((a) => a.status === 'pending_review')?.id ?? '' };
    case 'user_answered_questions': return { type, answers: {} };
    default: return { type };
  }
}

/**
 * The user events the session would take now, guards evaluated: `acceptedUserEvents` minus
 * those a guard refuses (no request to confirm yet, no question card, no artifact under
 * review). `snapshot.can()` cannot tell, since the root wildcard takes every event.
 */
export function enabledUserEvents(snapshot: AnyMachineSnapshot): UserEventType[] {
  const context = snapshot.context as SessionContext;
  return acceptedUserEvents(snapshot).filter((type) =>
    snapshot.machine.getTransitionData(snapshot as never, sampleEvent(type, context) as never).some((t) => t.eventType !== '*'),
  );
}

function describeState(state: string): string {
  if (state.startsWith('running')) return 'while the agents are working (wait until the session waits for you)';
  if (state === 'done') return 'because the session is done';
  return `while the session waits in ${state.replace('waiting_user.', '')}`;
}

export function explainRefusal(
  state: string,
  accepted: readonly string[],
  event: { type: string } & Record<string, unknown>,
  context: SessionContext,
): string {
  const type = event.type;
  if (!accepted.includes(type)) {
    const now = accepted.length ? ` Accepted now: ${accepted.join(', ')}.` : '';
    return `"${type}" is not accepted ${describeState(state)}.${now}`;
  }
  // Accepted here, so a guard said no: say which condition failed.
  switch (type) {
    case 'user_confirmed_intake':
      return 'There is no request to confirm yet: send user_submitted_input with your request first.';
    case 'user_accepted_artifact':
    case 'user_rejected_artifact': {
      const pending = context.artifacts.find((a) => a.status === 'pending_review');
      return `Artifact "${String(event.artifactId)}" is not the one under review${pending ? `; the artifact under review is "${pending.id}"` : ''}.`;
    }
    case 'user_answered_questions':
    case 'user_skipped_questions':
      return 'There is no question card to answer: send user_submitted_input instead.';
    case 'user_selected_package': {
      const known = context.catalog.map((p) => p.id).join(', ') || '(none)';
      return `Unknown package "${String(event.packageId)}". Packages: ${known}.`;
    }
    default:
      return `"${type}" was refused ${describeState(state)}.`;
  }
}
