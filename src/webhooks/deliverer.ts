/**
 * Sends the store's webhook outbox (src/store/outbox.ts) to its receivers, off every session's
 * path: a session's write only adds rows; this loop claims the due ones, POSTs each signed as
 * Standard Webhooks says (`webhook-id`: the row's id, the same on every try; `webhook-timestamp`;
 * `webhook-signature`, by the `standardwebhooks` library), deletes a message its receiver
 * acknowledged (2xx), and otherwise tries again later: the spec's suggested schedule with full
 * jitter (a random delay up to each step's), then a dead letter (`steward webhooks dead
 * --retry`). It wakes on new rows (the store's `watch`: NOTIFY on PostgreSQL) and on a timer
 * for retries coming due. Delivery is at least once: a server killed mid-POST leaves the
 * claimed row due again when the claim runs out, and another (or the restarted) server sends it.
 */
import { Webhook } from 'standardwebhooks';
import { UserError } from '../core/errors.js';
import type { OutboxMessage, OutboxOps } from '../store/outbox.js';
import { DEFAULT_REQUEST_TIMEOUT_MS, shownReceiver, type WebhookReceiver } from './receivers.js';

/**
 * Waits before each try after the first (ms): the Standard Webhooks specification's suggested
 * schedule (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h); after the last, a dead letter.
 */
export const RETRY_SCHEDULE_MS: readonly number[] = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];

const DEFAULT_POLL_MS = 1_000;
/** POSTs under way at once, at most: a slow receiver holds its own, never the others' messages. */
const MAX_IN_FLIGHT = 32;

export interface DelivererOptions {
  outbox: OutboxOps;
  receivers: readonly WebhookReceiver[];
  /** The clock (epoch ms); tests pass a fake one and call `deliverDue()` themselves. */
  now?: () => number;
  /** In [0, 1): full jitter picks `random() × step` (tests pass a fixed one). */
  random?: () => number;
  /** Waits between tries (default RETRY_SCHEDULE_MS): `schedule.length + 1` tries in all. */
  schedule?: readonly number[];
  /** How long a receiver has to answer (default 15 s); a claim lasts twice that and 1 s more. */
  requestTimeoutMs?: number;
  /** How often to look for retries come due (default 1 s). */
  pollMs?: number;
  /** What is logged: a delivery that failed (never a secret, a body, or a receiver's path or query). */
  log?: (message: string) => void;
}

/**
 * A running deliverer of one store's outbox to `receivers`.
 *
 * @example
 * const deliverer = new WebhookDeliverer({ outbox: store.outbox!, receivers });
 * await deliverer.start();
 * // … at shutdown:
 * await deliverer.stop();
 */
export class WebhookDeliverer {
  private readonly signers: Map<string, Webhook>;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly schedule: readonly number[];
  private readonly requestTimeoutMs: number;
  /** A claiming pass under way (wake() runs one at a time; the POSTs it starts run on after it). */
  private running: Promise<unknown> | null = null;
  /** Deliveries under way, each resolving once its row is updated. */
  private readonly sending = new Set<Promise<void>>();
  private again = false;
  private timer: NodeJS.Timeout | null = null;
  private unwatch: (() => Promise<void>) | null = null;
  private stopped = false;
  private readonly inFlight = new Set<AbortController>();

  constructor(private readonly options: DelivererOptions) {
    this.signers = new Map(options.receivers.map((receiver) => [receiver.url, new Webhook(receiver.secret)]));
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    this.schedule = options.schedule ?? RETRY_SCHEDULE_MS;
    this.requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    if (!Number.isInteger(this.requestTimeoutMs) || this.requestTimeoutMs < 1)
      throw new UserError(`Webhook requestTimeoutMs must be a whole number of milliseconds ≥ 1 (got ${String(options.requestTimeoutMs)}).`);
  }

  /** Listens for new messages and starts the timer; delivers what is due now. */
  async start(): Promise<void> {
    this.unwatch = await this.options.outbox.watch(() => this.wake());
    const poll = () => {
      if (this.stopped) return;
      this.wake();
      this.timer = setTimeout(poll, this.options.pollMs ?? DEFAULT_POLL_MS);
      this.timer.unref();
    };
    poll();
  }

  /** Stops looking for messages and aborts the POSTs under way (their rows stay claimed, then due again). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.unwatch?.();
    await this.running?.catch(() => 0);
    for (const controller of this.inFlight) controller.abort();
    await Promise.all(this.sending);
  }

  /** Runs a pass now, or once more after the one under way. */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.startDue()
      .catch((error: unknown) => {
        this.options.log?.(`webhooks: the outbox could not be read: ${error instanceof Error ? error.message : String(error)}`);
        return [];
      })
      .finally(() => {
        this.running = null;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** Claims and sends every message due now; resolves, once each was tried, with how many were. */
  async deliverDue(): Promise<number> {
    const started = await this.startDue();
    await Promise.all(started);
    return started.length;
  }

  /**
   * Claims due messages while fewer than MAX_IN_FLIGHT POSTs are under way and starts one for
   * each; resolves with them once nothing more is due or there is no room. The claiming does
   * not wait for the POSTs: a receiver that takes its whole timeout delays nobody else's.
   */
  private async startDue(): Promise<Promise<void>[]> {
    const receivers = [...this.signers.keys()];
    const started: Promise<void>[] = [];
    while (receivers.length && !this.stopped) {
      const room = MAX_IN_FLIGHT - this.sending.size;
      if (room <= 0) break;
      // Longer than a try can take (its POST, then its row's update), so a live deliverer's claim never runs out under it.
      const claimMs = this.requestTimeoutMs * 2 + 1_000;
      const batch = await this.options.outbox.claim({ receivers, now: this.now(), claimMs, limit: room });
      for (const message of batch) {
        const delivery: Promise<void> = this.deliver(message)
          .catch((error: unknown) =>
            this.options.log?.(`webhooks: ${message.id} could not be updated: ${error instanceof Error ? error.message : String(error)}`),
          )
          .finally(() => {
            const wasFull = this.sending.size >= MAX_IN_FLIGHT;
            this.sending.delete(delivery);
            // Room again: what waited for it may be due.
            if (wasFull) this.wake();
          });
        this.sending.add(delivery);
        started.push(delivery);
      }
      if (batch.length < room) break;
    }
    return started;
  }

  /** One try of one message; its row is updated by the outcome. */
  private async deliver(message: OutboxMessage): Promise<void> {
    // Claimed as the deliverer stopped: the claim runs out and another deliverer sends it.
    if (this.stopped) return;
    const signer = this.signers.get(message.receiver)!;
    const body = JSON.stringify(message.payload);
    // The wall clock, not `now` (the schedule's, faked in tests): receivers check it against theirs.
    const sentAt = new Date();
    const controller = new AbortController();
    const timeout = setTimeout(() => controller.abort(), this.requestTimeoutMs);
    this.inFlight.add(controller);
    let failure: string | null;
    try {
      const response = await fetch(message.receiver, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'webhook-id': message.id,
          'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
          'webhook-signature': signer.sign(message.id, sentAt, body),
        },
        body,
        redirect: 'manual',
        signal: controller.signal,
      });
      // The body is the receiver's: not read, not kept.
      await response.body?.cancel().catch(() => {});
      failure = response.status >= 200 && response.status < 300 ? null : `HTTP ${response.status}`;
    } catch (error) {
      failure = controller.signal.aborted ? (this.stopped ? 'stopped' : `no answer within ${this.requestTimeoutMs} ms`) : networkError(error);
    } finally {
      clearTimeout(timeout);
      this.inFlight.delete(controller);
    }
    // Stopped mid-POST: the claim runs out and the message is due again; nothing to record.
    if (failure === 'stopped') return;
    if (failure === null) return this.options.outbox.delivered(message.id);
    const attempts = message.attempts + 1;
    const step = this.schedule[attempts - 1];
    if (step === undefined) {
      this.options.log?.(`webhooks: gave up on ${message.id} (${message.type}) to ${shownReceiver(message.receiver)} after ${attempts} tries: ${failure}`);
      return this.options.outbox.deadLetter(message.id, { attempts, error: failure });
    }
    // Full jitter: anywhere up to the step, so receivers coming back are not met by every sender at once.
    const nextAt = this.now() + Math.floor(this.random() * step);
    return this.options.outbox.retryLater(message.id, { attempts, nextAt, error: failure });
  }
}

/** A network failure in words (fetch's TypeError hides the cause: ECONNREFUSED, a DNS failure…). */
function networkError(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  if (typeof cause?.code === 'string') return `network error ${cause.code}`;
  return `network error: ${error instanceof Error ? error.message : String(error)}`.slice(0, 200);
}
