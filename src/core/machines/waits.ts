/**
 * Which wait a decision answers. Each wait the chart opens gets the next number (the first
 * is 1), kept in the context with a digest of the decision that closed the latest one. A user
 * event may name the wait it answers (`wait`); the chart refuses one that names a wait that
 * is not open (the guard `namesClosedWait`), so a decision made for one wait never lands on
 * the next: a double click, a retried request, a second tab, two servers racing.
 *
 * The number is the chart's own, not the journal's sequence: the store numbers the journal
 * (and a refusal decided before the chart saw an event is an entry too), a session without a
 * store has no journal, and a pure `transition()` has neither; a counter in the context is
 * the same in all of them.
 *
 * The digest tells a repeat of the decision that closed a wait from another decision for it.
 * It decides only how a refusal is reported (a harmless repeat, or a wait answered
 * otherwise), never whether anything is applied: a digest that matched by chance would still
 * apply nothing.
 */
import { canonicalJson } from '../text/canonical-json.js';
import type { OpenDeadline } from './deadlines.js';
import type { Rejection, SessionContext } from './session.context.js';

/** The waits of a session: the number of the latest one opened, and the decision that closed the latest one answered. */
export interface WaitLedger {
  /** The number of the wait opened last (0: none yet); while the session waits, the open wait's. */
  opened: number;
  /** The latest wait a decision closed, and the digest of that decision (decisionDigest). */
  answered: { wait: number; digest: string } | null;
  /** The latest wait's deadline: the rule of its chain that is current (deadlines.ts); null: none. Read only while it is open. */
  deadline: OpenDeadline | null;
  /** The groups that may decide the latest wait (deadlines.ts); null: anyone who may see the session. Read only while it is open. */
  deciders: string[] | null;
}

export const NO_WAITS: WaitLedger = { opened: 0, answered: null, deadline: null, deciders: null };

/** The guard of the refusal edge each user event of a waiting state has first. */
export const CLOSED_WAIT_GUARD = 'namesClosedWait';

/** What a decision says, apart from who sent it, when, and for which wait. */
const NOT_THE_DECISION = new Set(['at', 'by', 'via', 'through', 'wait', 'groups']);

/**
 * A short digest of what a decision says (its type and fields; not `at`, `by`, `via`, `through`,
 * `groups` or `wait`): two sends of the same decision have the same digest. FNV-1a, twice with two
 * offsets (64 bits): pure, browser-safe and synchronous, as a transition must be.
 *
 * @example
 * decisionDigest({ type: 'user_rejected_next_step', reason: 'No.', by: 'ana' }) === decisionDigest({ type: 'user_rejected_next_step', reason: 'No.' }); // true
 */
export function decisionDigest(event: { type: string }): string {
  const said = Object.fromEntries(Object.entries(event).filter(([key]) => !NOT_THE_DECISION.has(key)));
  const text = canonicalJson(said);
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    a = Math.imul(a ^ code, 0x01000193);
    b = Math.imul(b ^ code, 0x01000193);
  }
  return `${(a >>> 0).toString(16).padStart(8, '0')}${(b >>> 0).toString(16).padStart(8, '0')}`;
}

/** The wait a user event names, if it names one. */
export function namedWait(event: { type: string }): number | undefined {
  const wait = (event as { wait?: unknown }).wait;
  return typeof wait === 'number' ? wait : undefined;
}

/**
 * Whether the event names a wait other than the open one (`open`: the session waits; false
 * while it runs or is done, when no wait is open).
 *
 * @example
 * namesClosedWait(context, { type: 'user_approved_next_step', wait: 3 }, true); // true when wait 4 is open
 */
export function namesClosedWait(context: SessionContext, event: { type: string }, open: boolean): boolean {
  const wait = namedWait(event);
  return wait !== undefined && (!open || wait !== context.waits.opened);
}

/**
 * Whether the event repeats the decision that closed the wait it names (so nothing is lost by
 * refusing it: it was applied once already).
 *
 * @example
 * if (repeatsClosingDecision(context, event)) return { ok: true, view, repeated: true };
 */
export function repeatsClosingDecision(context: SessionContext, event: { type: string }): boolean {
  const answered = context.waits.answered;
  const wait = namedWait(event);
  return answered !== null && wait === answered.wait && answered.digest === decisionDigest(event);
}

/** Why an event naming a closed wait is refused, in words that name the fix. */
export function closedWaitMessage(context: SessionContext, event: { type: string }, state: string): string {
  const wait = namedWait(event) ?? 0;
  const now = state.startsWith('waiting_user.')
    ? `the open wait is ${context.waits.opened} (${state.slice('waiting_user.'.length)})`
    : `no wait is open (${state})`;
  if (repeatsClosingDecision(context, event)) return `Wait ${wait} was already answered by this same decision: it was not applied again; ${now}.`;
  if (wait > context.waits.opened) return `Wait ${wait} has not opened: "${event.type}" was not applied; ${now}. Name the wait the session shows.`;
  const answered = context.waits.answered?.wait === wait ? ' by another decision' : '';
  return `Wait ${wait} is no longer open (it was answered${answered}): "${event.type}" was not applied; ${now}. Read the session and decide on the open wait.`;
}

/**
 * The refusal of an event naming a closed wait, as the refusal log keeps it (`at`: when it was sent).
 *
 * @example
 * const rejection = closedWaitRejection(context, event, 'waiting_user.approve_step'); // { code: 'wait_closed', reason: 'Wait 3 is no longer open …', … }
 */
export function closedWaitRejection(context: SessionContext, event: { type: string; at?: unknown }, state: string): Rejection {
  return {
    type: event.type,
    state,
    reason: closedWaitMessage(context, event, state),
    code: 'wait_closed',
    ...(repeatsClosingDecision(context, event) ? { repeated: true as const } : {}),
    ...(typeof event.at === 'string' ? { at: event.at } : {}),
  };
}
