/**
 * `decisionLink`: the absolute URL of a decision link (src/http/decision-links.ts), made with
 * the server's link secret and its public URL. One function for everything that hands links
 * out (`POST /sessions/{id}/links` today).
 */
import { UserError } from '../core/errors.js';
import type { DecisionLinks, IssuedLink } from '../http/decision-links.js';

export interface DecisionLinkRequest {
  /** The session's id. */
  session: string;
  /** The number of the wait the link decides (the view's `wait`). */
  wait: number;
  /** Who decides: recorded as the decision's `by`. */
  recipient: string;
  /** How long the link works: `30m`, `24h` (the default), `7d`; 1 minute to 30 days. */
  expiresIn?: string;
  /** The groups the recipient decides as (the decision's `groups`), at most MAX_LINK_GROUPS; absent: none. */
  groups?: readonly string[];
}

export interface DecisionLink extends IssuedLink {
  /** The link to hand the recipient: `<public URL>/links/<token>`. */
  url: string;
  sessionId: string;
  wait: number;
}

/** Makes a link for one wait of one session; throws a UserError for a recipient or expiry it cannot sign. */
export type DecisionLinkFn = (request: DecisionLinkRequest) => DecisionLink;

/**
 * The `decisionLink` function of a server: its links, at its public URL (asked for at each
 * call: `steward serve` knows its address once it listens).
 *
 * @example
 * const decisionLink = decisionLinkFn(links, () => 'https://steward.example.com');
 * decisionLink({ session: 's-1', wait: 3, recipient: 'alice', expiresIn: '24h' }).url; // https://steward.example.com/links/eyJ2Ijox…
 */
export function decisionLinkFn(links: DecisionLinks, publicUrl: () => string | undefined): DecisionLinkFn {
  return (request) => {
    const base = publicUrl();
    if (base === undefined)
      throw new UserError('A decision link needs the URL people reach this server at: start serve with --public-url (createServeApp: publicUrl).');
    const issued = links.issue(request);
    return { ...issued, url: `${base}/links/${issued.token}`, sessionId: request.session, wait: request.wait };
  };
}
