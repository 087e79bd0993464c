/**
 * Who is told: a webhook receiver is a URL, the secret its messages are signed with (Standard
 * Webhooks: `whsec_` and the key in base64) and, optionally, the events it wants. Embedders
 * pass them to `createRuntime({ webhooks })` and `serve({ webhooks })`; `steward serve` builds
 * them from `--webhook`, `--webhook-events` and the secret (receiversFromOptions). A secret is
 * never printed: errors name the receiver by its URL only.
 */
import { createHash } from 'node:crypto';
import * as z from 'zod';
import { UserError } from '../core/errors.js';
import { WebhookEventTypeSchema, type WebhookEventType } from './events.js';

/** How long a receiver has to answer a message (ms) unless told otherwise (`--webhook-timeout-ms`). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 15_000;

/** A Standard Webhooks secret: `whsec_` and at least 24 bytes of key in base64. */
const SECRET = /^whsec_[A-Za-z0-9+/]{32,}={0,2}$/;

export const WebhookReceiverSchema = z.strictObject({
  /** Where messages are POSTed (http or https). */
  url: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).max(2000),
  /** Signs every message (never logged). */
  secret: z.string().regex(SECRET, { error: 'must be a Standard Webhooks secret: "whsec_" and a base64 key of at least 24 bytes' }),
  /** The events it wants; absent: every event. */
  events: z.array(WebhookEventTypeSchema).optional(),
});

export type WebhookReceiver = z.infer<typeof WebhookReceiverSchema>;

/**
 * Receivers as given (an option, a config file), checked: one URL once each.
 *
 * @example
 * const receivers = checkReceivers([{ url: 'https://hooks.example.com/steward', secret: process.env.WEBHOOK_SECRET! }], 'createRuntime');
 */
export function checkReceivers(value: unknown, where: string): WebhookReceiver[] {
  const parsed = z.array(WebhookReceiverSchema).safeParse(value);
  if (!parsed.success) {
    // The issue's path and message only: never the value, which may be a secret.
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'webhooks'} ${issue.message}`).join('; ');
    throw new UserError(`${where}: webhooks are [{ url, secret, events? }]: ${problems}.`);
  }
  const seen = new Set<string>();
  for (const receiver of parsed.data) {
    if (seen.has(receiver.url)) throw new UserError(`${where}: the webhook ${shownReceiver(receiver.url)} is given twice; give each receiver once.`);
    seen.add(receiver.url);
  }
  return parsed.data;
}

/**
 * A receiver as Steward prints it (logs, the CLI, errors): its origin and a short digest of the
 * whole URL, never its path or query — Slack's and most chat services' webhook URLs carry their
 * secret in the path. The digest tells two receivers of one origin apart.
 *
 * @example
 * shownReceiver('https://hooks.slack.com/services/T0/B0/secret'); // 'https://hooks.slack.com/… #3f9a1c'
 */
export function shownReceiver(url: string): string {
  const digest = createHash('sha256').update(url).digest('hex').slice(0, 6);
  try {
    return `${new URL(url).origin}/… #${digest}`;
  } catch {
    return `(not a URL) #${digest}`;
  }
}

/** Whether `receiver` wants `type`. */
export const receiverWants = (receiver: Pick<WebhookReceiver, 'events'>, type: WebhookEventType): boolean => !receiver.events || receiver.events.includes(type);

/**
 * The secrets of `steward serve`'s receivers, from a file (`--webhook-secret-file`) or
 * STEWARD_WEBHOOK_SECRET: each line is a secret for every receiver, or `URL secret` for one.
 * Returns the secret of `url`.
 */
export function secretFor(url: string, text: string, source: string): string {
  let fallback: string | undefined;
  for (const [first, second] of secretLines(text, source)) {
    if (second === undefined) fallback ??= first;
    else if (first === url) return second;
  }
  if (fallback) return fallback;
  throw new UserError(
    `${source} holds no secret for the webhook ${shownReceiver(url)}: add a line "whsec_…" (every receiver) or "URL whsec_…" with that receiver's whole URL.`,
  );
}

/** The lines of a secrets text: `[secret]` or `[url, secret]` each (blank lines and # comments skipped). */
function secretLines(text: string, source: string): Array<[string, string | undefined]> {
  const lines: Array<[string, string | undefined]> = [];
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const [first, second, ...rest] = line.split(/\s+/);
    if (rest.length) throw new UserError(`${source}: a line is "whsec_…" or "URL whsec_…"; one has more parts.`);
    lines.push([first!, second]);
  }
  return lines;
}

/**
 * The receivers a secrets text names (its `URL whsec_…` lines), in order: how `steward serve`
 * learns its receivers without `--webhook URL`, whose URL — a chat service's secret is in it —
 * any user of the machine would read in the process list.
 *
 * @example
 * receiverUrlsIn('https://hooks.example.com/T0/B0/x whsec_…\n', 'secrets.txt'); // ['https://hooks.example.com/T0/B0/x']
 */
export function receiverUrlsIn(text: string, source: string): string[] {
  return secretLines(text, source).flatMap(([first, second]) => (second === undefined ? [] : [first]));
}

export interface ReceiverOptions {
  urls: readonly string[];
  events?: readonly WebhookEventType[];
  /** The secrets' text (a file's content or STEWARD_WEBHOOK_SECRET), and where it came from for errors. */
  secrets?: { text: string; source: string };
}

/** `steward serve`'s receivers: each `--webhook` URL with its secret and the `--webhook-events` filter. */
export function receiversFromOptions({ urls, events, secrets }: ReceiverOptions): WebhookReceiver[] {
  if (!urls.length) return [];
  if (!secrets)
    throw new UserError(
      'A webhook needs a secret to sign its messages: set STEWARD_WEBHOOK_SECRET=whsec_… or pass --webhook-secret-file PATH (a line "whsec_…", or "URL whsec_…" per receiver).',
    );
  return checkReceivers(
    urls.map((url) => ({ url, secret: secretFor(url, secrets.text, secrets.source), ...(events?.length ? { events: [...events] } : {}) })),
    'steward serve',
  );
}
