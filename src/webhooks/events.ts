/**
 * The webhook events: the one table of their names, which chart event (session.reports.ts,
 * XState `emit`) makes each fire, and the filter a receiver gives. A chart event fires at
 * most one webhook: `deadline_passed` fires one of three by the rule's outcome, and the
 * `decision` a deadline made (`eventType: deadline_passed`, by Steward) fires none, since
 * `session.expired` or `session.escalated` already says it. The chart has no failed end: a
 * failed model call is what fails (`session.failed`), and the session then waits for a person
 * with the failure in its view's notice (the `session.waiting` of that wait follows).
 */
import * as z from 'zod';
import { UserError } from '../core/errors.js';
import type { SessionStreamEventType } from '../core/machines/stream-events.js';

/** What makes a webhook fire: a chart event's type (`on`), with fields it must have (`when`) or must not (`unless`). */
interface Trigger {
  on: SessionStreamEventType;
  when?: Readonly<Record<string, string>>;
  unless?: Readonly<Record<string, string>>;
}

/** Webhook event type → the chart event that fires it. */
export const WEBHOOK_EVENTS = {
  /** A wait opened: the chart's `waiting` for a wait number not announced before (an escalated wait is a new one). */
  'session.waiting': { on: 'waiting' },
  /** A person's decision ended a wait: the chart's `decision`, unless a deadline made it. */
  'session.answered': { on: 'decision', unless: { eventType: 'deadline_passed' } },
  /** A deadline rejected the wait (nobody decided in time): the chart's `deadline_passed`, outcome `reject`. */
  'session.expired': { on: 'deadline_passed', when: { outcome: 'reject' } },
  /** A deadline handed the wait to another group (`to`), as a new wait: outcome `escalate`. */
  'session.escalated': { on: 'deadline_passed', when: { outcome: 'escalate' } },
  /** A deadline reminded people of the wait, which stays as it was: outcome `remind`. */
  'session.reminded': { on: 'deadline_passed', when: { outcome: 'remind' } },
  /** The session ended: the chart's `done`. */
  'session.done': { on: 'done' },
  /** The agents' work failed: a model round's call failed (the chart's `round_finished`, outcome `failed`). */
  'session.failed': { on: 'round_finished', when: { outcome: 'failed' } },
} as const satisfies Record<string, Trigger>;

export type WebhookEventType = keyof typeof WEBHOOK_EVENTS;
export const WEBHOOK_EVENT_TYPES = Object.keys(WEBHOOK_EVENTS) as [WebhookEventType, ...WebhookEventType[]];
export const WebhookEventTypeSchema = z.enum(WEBHOOK_EVENT_TYPES);

const TRIGGERS = Object.entries(WEBHOOK_EVENTS).map(([webhook, trigger]) => [webhook as WebhookEventType, trigger as Trigger] as const);

const has = (event: Record<string, unknown>, fields: Readonly<Record<string, string>> | undefined) =>
  Object.entries(fields ?? {}).every(([key, value]) => event[key] === value);

/**
 * The webhook type a chart event fires, or undefined (most chart events fire none).
 *
 * @example
 * webhookTypeOf({ type: 'deadline_passed', outcome: 'escalate', to: 'leads' }); // 'session.escalated'
 */
export function webhookTypeOf(event: { type: string }): WebhookEventType | undefined {
  const fields = event as Record<string, unknown>;
  const found = TRIGGERS.find(([, t]) => t.on === event.type && has(fields, t.when) && (!t.unless || !has(fields, t.unless)));
  return found?.[0];
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
