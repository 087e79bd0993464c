/**
 * The webhook events: the one table of their names, which chart event (session.reports.ts,
 * XState `emit`) makes each fire, and the filter a receiver gives. Deadlines (a later chart
 * change) will emit what `session.expired` and `session.escalated` need; the chart has no
 * failed end either (a failed model call leaves the session waiting, which fires
 * `session.waiting` with the notice in its view). Those names are reserved now, so a filter
 * may list them, but they fire only once the chart emits them.
 */
import * as z from 'zod';
import { UserError } from '../core/errors.js';

/** Webhook event type → the chart event that fires it (null: the chart emits none yet). */
export const WEBHOOK_EVENTS = {
  /** A wait opened: the chart's `waiting` for a wait number not announced before. */
  'session.waiting': 'waiting',
  /** A person's decision ended a wait: the chart's `decision`. */
  'session.answered': 'decision',
  /** The session ended: the chart's `done`. */
  'session.done': 'done',
  'session.expired': null,
  'session.escalated': null,
  'session.failed': null,
} as const;

export type WebhookEventType = keyof typeof WEBHOOK_EVENTS;
export const WEBHOOK_EVENT_TYPES = Object.keys(WEBHOOK_EVENTS) as [WebhookEventType, ...WebhookEventType[]];
export const WebhookEventTypeSchema = z.enum(WEBHOOK_EVENT_TYPES);

/** The chart events that fire a webhook, by their type. */
type FiringChartType = NonNullable<(typeof WEBHOOK_EVENTS)[WebhookEventType]>;
const BY_CHART_TYPE = new Map(
  Object.entries(WEBHOOK_EVENTS).flatMap(([webhook, chart]) => (chart ? [[chart, webhook as WebhookEventType] as const] : [])),
) as ReadonlyMap<string, WebhookEventType>;

/** The webhook type a chart event fires, or undefined (most chart events fire none). */
export function webhookTypeOf(chartType: string): WebhookEventType | undefined {
  return BY_CHART_TYPE.get(chartType as FiringChartType);
}

/**
 * A receiver's event filter as a person writes it: names with or without `session.`
 * ("waiting,done"), comma-separated; empty: every event.
 *
 * @example
 * parseEventFilter('waiting,session.done'); // ['session.waiting', 'session.done']
 */
export function parseEventFilter(text: string): WebhookEventType[] {
  const names = text
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  return names.map((name) => {
    const full = name.startsWith('session.') ? name : `session.${name}`;
    const parsed = WebhookEventTypeSchema.safeParse(full);
    if (!parsed.success) {
      const known = WEBHOOK_EVENT_TYPES.map((type) => type.slice('session.'.length)).join(', ');
      throw new UserError(`Unknown webhook event "${name.slice(0, 60)}": use a comma-separated list of ${known}.`);
    }
    return parsed.data;
  });
}
