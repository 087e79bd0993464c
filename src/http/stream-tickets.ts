/**
 * Stream tickets: an EventSource cannot send an Authorization header, and a long-lived
 * token in a URL ends up in histories and proxy logs. So a page asks for a ticket with its
 * token (`POST /sessions/{id}/stream-tickets`) and opens `GET /sessions/{id}/stream?ticket=…`.
 * A ticket opens that one session's stream, and no other route, for 60 seconds, as the
 * caller who asked for it.
 *
 * A ticket is signed, not stored: `base64url(JSON claims) "." base64url(HMAC-SHA256)`. No
 * table and no shared memory, so a ticket one server issued opens the stream on any server
 * with the same signing key — several servers on one PostgreSQL database behind a load
 * balancer take each other's tickets. The key is derived from the server's bearer token(s)
 * (servers configured alike agree; changing a token rotates it) or given (`ticketSecret`);
 * a server without tokens takes no tickets at all (its stream is open anyway).
 * A ticket can be used again within its minute (an EventSource reconnects with the same
 * URL); it is never written to a log (the servers log paths, never query strings).
 */
import { openClaims, signClaims, signingKey } from './signed-claims.js';
import * as z from 'zod';
import type { Caller } from './auth.js';
import { HttpError } from './errors.js';
import type { ServeTokens } from './tokens.js';
import { MAX_CALLER_GROUPS, MAX_CALLER_NAME_CHARS, MAX_GROUP_NAME_CHARS } from '../store/participants.js';

/** How long a ticket opens its stream. */
export const STREAM_TICKET_TTL_MS = 60_000;
/** Longer than any ticket this module signs: a longer `?ticket=` is not looked at. */
const MAX_TICKET_CHARS = 2048;
const CONTEXT = 'steward stream ticket v1';

const Claims = z.strictObject({
  v: z.literal(1),
  /** The session whose stream it opens. */
  s: z.string().min(1).max(500),
  /** Expiry, epoch ms. */
  e: z.number().int().positive(),
  /** The caller who asked for it (none on a server whose app authenticates nobody), its groups too: the stream is checked as theirs. */
  c: z
    .strictObject({
      name: z.string().max(MAX_CALLER_NAME_CHARS),
      actForOthers: z.boolean(),
      named: z.boolean(),
      groups: z.array(z.string().max(MAX_GROUP_NAME_CHARS)).max(MAX_CALLER_GROUPS).optional(),
    })
    .optional(),
});

export interface IssuedTicket {
  ticket: string;
  sessionId: string;
  /** ISO time after which the ticket opens nothing. */
  expiresAt: string;
}

/**
 * Signs and checks stream tickets with one key.
 *
 * @example
 * const tickets = StreamTickets.forTokens({ kind: 'shared', token: process.env.STEWARD_TOKEN! });
 * const { ticket } = tickets.issue('s-1', caller);
 * tickets.verify(ticket, 's-1'); // the caller, or a 401 HttpError
 */
export class StreamTickets {
  private constructor(
    private readonly key: Buffer,
    private readonly now: () => number,
  ) {}

  /** The key every server with the same tokens derives; `secret` instead when given (an app's own auth). */
  static forTokens(tokens: ServeTokens, options: { secret?: string; now?: () => number } = {}): StreamTickets {
    return new StreamTickets(signingKey(CONTEXT, tokens, options.secret), options.now ?? Date.now);
  }

  issue(sessionId: string, caller: Caller | undefined): IssuedTicket {
    const expires = this.now() + STREAM_TICKET_TTL_MS;
    const claims: z.infer<typeof Claims> = {
      v: 1,
      s: sessionId,
      e: expires,
      ...(caller
        ? { c: { name: caller.name, actForOthers: caller.actForOthers, named: caller.named, ...(caller.groups?.length ? { groups: [...caller.groups] } : {}) } }
        : {}),
    };
    return { ticket: signClaims(this.key, claims), sessionId, expiresAt: new Date(expires).toISOString() };
  }

  /** The caller a ticket carries, if it opens `sessionId`'s stream now; else a 401 that says what to do. */
  verify(ticket: string, sessionId: string): Caller | undefined {
    const refuse = (why: string) =>
      new HttpError(
        401,
        'unauthorized',
        `This stream ticket ${why}: ask for a new one with POST /sessions/${sessionId}/stream-tickets (it opens that session's stream for ${STREAM_TICKET_TTL_MS / 1000} s), or send "Authorization: Bearer <token>".`,
      );
    const opened = openClaims(this.key, ticket, Claims, MAX_TICKET_CHARS);
    if (!opened.ok) throw refuse(opened.why === 'forged' ? 'is not one this server signed' : 'is malformed');
    const claims = opened.claims;
    if (claims.s !== sessionId) throw refuse("is for another session's stream");
    if (claims.e <= this.now()) throw refuse('has expired');
    return claims.c;
  }
}
