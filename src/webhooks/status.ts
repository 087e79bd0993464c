/**
 * What `/healthz` says of the webhook outbox: counts and the latest dead letters, without
 * what a public route must not show (the receiver's URL may hold a token; the body is a
 * session's content).
 */
import type { OutboxOps } from '../store/outbox.js';

/** How many dead letters `/healthz` lists (the CLI lists more: `steward webhooks dead`). */
export const DEAD_LETTERS_SHOWN = 10;

/**
 * The outbox's health for `receivers` receivers.
 *
 * @example
 * const health = await webhookHealth(store.outbox!, runtime.webhooks.length);
 */
export async function webhookHealth(outbox: OutboxOps, receivers: number) {
  const [counts, dead] = await Promise.all([outbox.counts(), outbox.deadLetters(DEAD_LETTERS_SHOWN)]);
  return {
    receivers,
    ...counts,
    deadLetters: dead.map(({ id, type, attempts, lastError, createdAt }) => ({ id, type, attempts, lastError, createdAt })),
  };
}
