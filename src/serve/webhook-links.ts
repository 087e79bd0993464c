/**
 * The decision links a server puts in webhook messages (src/webhooks/links.ts): for a wait
 * that names the groups that decide it, one link per named token in one of those groups —
 * the people this server knows to be its deciders — signed for that wait alone, naming the
 * person and the groups they decide as, and good until the wait's deadline is due (else the
 * links' default lifetime). Tokens that act for others are apps, not people: they get none.
 */
import { DEFAULT_LINK_EXPIRES_IN, MAX_LINK_GROUPS, MAX_LINK_LIFETIME_MS, MIN_LINK_LIFETIME_MS } from '../http/decision-links.js';
import type { NamedToken } from '../http/tokens.js';
import type { RecipientLink, WaitToLink, WebhookLinks } from '../webhooks/links.js';
import type { DecisionLinkFn } from './decision-link.js';

/** How long a link for this wait lasts: until its deadline, in whole minutes, within the links' bounds (however close the deadline is, at least the shortest a link may live). */
function expiresIn(wait: WaitToLink, now: number): string {
  if (wait.dueAt === null) return DEFAULT_LINK_EXPIRES_IN;
  const ms = Math.min(Math.max(Date.parse(wait.dueAt) - now, MIN_LINK_LIFETIME_MS), MAX_LINK_LIFETIME_MS);
  return `${Math.ceil(ms / 60_000)}m`;
}

/**
 * The `webhookLinks` of a server with named tokens and a link secret.
 *
 * @example
 * const runtime = createRuntime({ model, store, webhooks, webhookLinks: webhookLinksFor(decisionLinkFn(links, () => publicUrl), tokens) });
 */
export function webhookLinksFor(decisionLink: DecisionLinkFn, tokens: readonly NamedToken[], now: () => number = Date.now): WebhookLinks {
  return (wait) => {
    if (!wait.deciders) return [];
    const links: RecipientLink[] = [];
    for (const token of tokens) {
      if (token.actForOthers) continue;
      const groups = (token.groups ?? []).filter((g) => wait.deciders!.includes(g)).slice(0, MAX_LINK_GROUPS);
      if (!groups.length) continue;
      const link = decisionLink({ session: wait.sessionId, wait: wait.wait, recipient: token.name, groups, expiresIn: expiresIn(wait, now()) });
      links.push({ recipient: link.recipient, url: link.url, expiresAt: link.expiresAt });
    }
    return links;
  };
}
