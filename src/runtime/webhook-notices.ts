/**
 * Which webhook messages a session's journal entry carries. The chart says what happened
 * (its `emit`s, session.reports.ts); the session hands each emitted event here as it happens
 * (`actor.on('*')`), and the next journal entry takes the messages of the events seen since
 * the entry before: one per (event, receiver that wants it), written to the store's outbox in
 * the entry's transaction. Nothing here reads states: a `waiting` the chart repeats for a wait
 * already announced (after a refused event) fires nothing, told by the wait's number.
 */
import { randomBytes } from 'node:crypto';
import type { AnyEventObject } from 'xstate';
import type { ChartEvent } from '../core/machines/session.reports.js';
import type { SessionView } from '../core/view.js';
import type { OutboxInput } from '../store/outbox.js';
import { webhookTypeOf, type WebhookEventType } from '../webhooks/events.js';
import { webhookBody } from '../webhooks/payload.js';
import type { RecipientLink, WebhookLinks } from '../webhooks/links.js';
import { receiverWants, type WebhookReceiver } from '../webhooks/receivers.js';
import { isoNow } from './iso-now.js';

/** A message id as Standard Webhooks shows them (`msg_…`): the `webhook-id` of every try. */
export const newMessageId = (): string => `msg_${randomBytes(16).toString('base64url')}`;

interface Seen {
  type: WebhookEventType;
  event: ChartEvent;
  at: string;
}

export class WebhookNotices {
  private seen: Seen[] = [];

  constructor(
    private readonly receivers: readonly Pick<WebhookReceiver, 'url' | 'events'>[],
    /** The highest wait number already announced (the context's `waits.opened` as the session starts). */
    private announcedWait: number,
    /** Makes the decision links of a wait that names its deciders (createRuntime({ webhookLinks })). */
    private readonly links?: WebhookLinks,
  ) {}

  /** An event the chart emitted. */
  readonly noticed = (event: ChartEvent | AnyEventObject): void => {
    const type = webhookTypeOf(event);
    if (!type) return;
    const chartEvent = event as ChartEvent;
    if (chartEvent.type === 'waiting') {
      if (chartEvent.wait <= this.announcedWait) return;
      this.announcedWait = chartEvent.wait;
    }
    if (this.receivers.some((receiver) => receiverWants(receiver, type))) this.seen.push({ type, event: chartEvent, at: isoNow() });
  };

  /** The messages of the events seen since the last call, with the view after them; undefined: none. */
  take(view: () => SessionView): OutboxInput[] | undefined {
    if (!this.seen.length) return undefined;
    const seen = this.seen;
    this.seen = [];
    const now = view();
    return seen.flatMap(({ type, event, at }) => {
      // A reminder brings fresh links too: those of the message that opened the wait may end at the reminder's due time.
      const links = type === 'session.waiting' || type === 'session.reminded' ? this.linksOf(now) : [];
      const payload = webhookBody(type, event as unknown as { type: string } & Record<string, unknown>, now, at, links);
      return this.receivers
        .filter((receiver) => receiverWants(receiver, type))
        .map((receiver) => ({ id: newMessageId(), receiver: receiver.url, type, payload }));
    });
  }

  /**
   * The links of the wait the view shows, when it names its deciders. A function that throws
   * (an app's) costs the message its links, never the session its write.
   */
  private linksOf(view: SessionView): readonly RecipientLink[] {
    if (!this.links || view.phase !== 'waiting_user' || view.wait === undefined || !view.deciders) return [];
    try {
      const wait = { sessionId: view.id, wait: view.wait, reason: view.waitingReason ?? '', deciders: view.deciders, dueAt: view.deadline?.dueAt ?? null };
      return this.links(wait);
    } catch {
      return [];
    }
  }
}
