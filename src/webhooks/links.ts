/**
 * Decision links in webhook bodies: when a wait names the groups that decide it, a message
 * announcing it carries a link for each person who may decide (`data.links`), so a receiver
 * can put approve / reject buttons in front of the right people (the Slack example does).
 * The runtime asks for them as it writes the message; who the people are and how a link is
 * signed is the server's (src/serve/webhook-links.ts), or an app's own function.
 */

/** A decision link for one person, as a webhook body carries it. */
export interface RecipientLink {
  /** Who decides through it: recorded as the decision's `by`. */
  recipient: string;
  url: string;
  /** ISO time after which the link decides nothing. */
  expiresAt: string;
}

/** The wait a message announces, as the links are asked for it. */
export interface WaitToLink {
  sessionId: string;
  /** The wait's number: the link decides this wait only. */
  wait: number;
  reason: string;
  /** The groups that decide it (null: the wait names none, and no link is made). */
  deciders: readonly string[] | null;
  /** When its deadline is due (null: none): a link need not outlive it. */
  dueAt: string | null;
}

/** Makes the links of a wait: one per person who may decide it (`createRuntime({ webhookLinks })`). */
export type WebhookLinks = (wait: WaitToLink) => readonly RecipientLink[];
