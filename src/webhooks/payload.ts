/**
 * A webhook message's body, as the Standard Webhooks specification suggests (`type`,
 * `timestamp`, `data`): the session, the chart event that fired it, the wait as the view shows
 * it, and the view. Bounded: a body over MAX_WEBHOOK_BYTES (an artifact's long bodies) keeps
 * the wait's number and reason and the view's summary, and says `truncated: true`; the whole
 * view is one GET of the session away.
 */
import type { SessionView } from '../core/view.js';
import type { WebhookEventType } from './events.js';
import type { RecipientLink } from './links.js';

export const MAX_WEBHOOK_BYTES = 64 * 1024;

export interface WebhookBody {
  type: WebhookEventType;
  /** ISO-8601 time of the event. */
  timestamp: string;
  data: {
    sessionId: string;
    /**
     * The chart's event (session.reports.ts) that fired the webhook, e.g. `{ type: 'waiting', reason, state, wait }`;
     * for a deadline, `{ type: 'deadline_passed', reason, wait, level, outcome, after, to }`.
     */
    event: { type: string } & Record<string, unknown>;
    /** What the session waits for now, as the view shows it; null when it does not wait. */
    wait: Record<string, unknown> | null;
    view: Partial<SessionView>;
    /** A `session.waiting` or `session.reminded` of a wait that names its deciders: a decision link per person who may decide it (links.ts). */
    links?: readonly RecipientLink[];
    truncated?: true;
  };
}

/** The view's fields that say what a person is asked, by when, and who may answer. */
const WAIT_FIELDS = [
  'wait',
  'waitingReason',
  'deadline',
  'deciders',
  'pendingStep',
  'approvalRequiredBy',
  'artifact',
  'toolCalls',
  'questions',
  'message',
  'assessment',
  'notice',
] as const;
/** What a truncated body keeps of the view. */
const SUMMARY_FIELDS = ['id', 'packageId', 'state', 'phase', 'waitingReason', 'wait', 'deadline', 'deciders', 'enabledEvents'] as const;

function pick<T extends object, K extends keyof T>(value: T, keys: readonly K[]): Partial<T> {
  const out: Partial<T> = {};
  for (const key of keys) if (value[key] !== undefined) out[key] = value[key];
  return out;
}

/**
 * The body of one webhook message.
 *
 * @example
 * const body = webhookBody('session.waiting', { type: 'waiting', reason: 'intake', state: 'waiting_user.intake', wait: 1 }, view, new Date().toISOString());
 */
export function webhookBody(
  type: WebhookEventType,
  event: WebhookBody['data']['event'],
  view: SessionView,
  timestamp: string,
  links: readonly RecipientLink[] = [],
): WebhookBody {
  const wait = view.phase === 'waiting_user' ? (pick(view, WAIT_FIELDS) as Record<string, unknown>) : null;
  const withLinks = links.length ? { links } : {};
  const body: WebhookBody = { type, timestamp, data: { sessionId: view.id, event, wait, view, ...withLinks } };
  if (Buffer.byteLength(JSON.stringify(body)) <= MAX_WEBHOOK_BYTES) return body;
  // The links are what a person acts on: a truncated body keeps them.
  const small = wait ? pick(wait, ['wait', 'waitingReason', 'deadline', 'deciders']) : null;
  return { type, timestamp, data: { sessionId: view.id, event, wait: small, view: pick(view, SUMMARY_FIELDS), ...withLinks, truncated: true } };
}
