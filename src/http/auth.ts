/**
 * Token authentication for Steward's HTTP servers, and what it proves about who acted.
 * `steward serve`: bearer tokens (`tokenAuth`), which put the authenticated caller on the
 * hono context (`c.get('caller')`); `attribute` turns the `by` an event claims into the
 * `by` the journal may record. The inspector: the one random token its page's URL carries
 * (`pageTokenAuth`). Either way tokens are compared as SHA-256 digests in constant time.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import { bearerAuth } from 'hono/bearer-auth';
import { HttpError } from './errors.js';
import { CallerNameSchema, GroupNameSchema, MAX_CALLER_GROUPS } from '../store/participants.js';
import { StewardError } from '../core/errors.js';
import { ACT_FOR_OTHERS, SHARED_TOKEN_NAME, type ServeTokens } from './tokens.js';
import { decisionGroups } from './access.js';
import type { DecisionChannel } from '../core/machines/session.events.js';

/** Who sent a request, as its bearer token proves it. */
export interface Caller {
  /** The token's name; for the one shared STEWARD_TOKEN, "token" (it names no one). */
  name: string;
  /** May record another name as an event's `by`. The shared token may: its holders are indistinguishable anyway. */
  actForOthers: boolean;
  /** A named token: `name` is verified, so an event with no `by` is by that name. */
  named: boolean;
  /**
   * The groups the caller is in (a token list's `groups=ops,admin`, or an app's own
   * `authenticate`): a session naming `group:ops` as a participant is theirs too, and the
   * `admin` group sees and decides every session (src/http/access.ts). Absent: none.
   */
  groups?: readonly string[];
}

declare module 'hono' {
  interface ContextVariableMap {
    /** Set by `tokenAuth` on every authenticated request; unset on a server without tokens and on public routes. */
    caller: Caller | undefined;
    /** Passed without the bearer check: a public route, or a stream opened with its ticket. */
    passedBy: 'public' | 'ticket' | undefined;
  }
}

/** An app's own check of a request (`createServeApp({ auth: { authenticate } })`): the caller, or undefined for 401. */
export type Authenticate = (c: Context) => Caller | undefined | Promise<Caller | undefined>;

/** How a serve app knows its callers: its bearer tokens, the embedding app's own check, or not at all (loopback, or the app's middleware did it). */
export type ServeAuth = { kind: 'tokens'; tokens: ServeTokens } | { kind: 'custom'; authenticate: Authenticate } | { kind: 'none' };

/**
 * The middleware that authenticates every request not marked `passedBy` (public routes, a
 * ticketed stream) and sets `caller`; none when the app takes anyone.
 */
export function callerAuth(auth: ServeAuth): MiddlewareHandler | undefined {
  const check = auth.kind === 'tokens' ? tokenAuth(auth.tokens) : auth.kind === 'custom' ? customAuth(auth.authenticate) : undefined;
  if (!check) return undefined;
  return async (c, next) => (c.get('passedBy') ? next() : check(c, next));
}

function customAuth(authenticate: Authenticate): MiddlewareHandler {
  return async (c, next) => {
    const caller = await authenticate(c);
    if (!caller) throw new HttpError(401, 'unauthorized', 'This request is not authenticated: sign in to the app that serves this API, then try again.');
    c.set('caller', checkedCaller(caller));
    await next();
  };
}

/**
 * The caller an app's `authenticate` returned, checked where a session and a stream ticket
 * record it: a name of 1–200 characters, groups (if any) an array of at most 64 group names.
 * A wrong one is the app's bug, not the client's: a 500 whose log line says what to fix.
 */
function checkedCaller(caller: Caller): Caller {
  const problem = (what: string) =>
    new StewardError('internal_error', `createServeApp: auth.authenticate returned a caller whose ${what}; return { name, named, actForOthers, groups? }.`);
  if (typeof caller !== 'object' || caller === null) throw problem('value is not an object');
  const name = CallerNameSchema.safeParse(caller.name);
  if (!name.success) throw problem(`name ${name.error.issues[0]!.message}`);
  if (caller.groups === undefined) return caller;
  if (!Array.isArray(caller.groups)) throw problem('groups is not an array of group names');
  if (caller.groups.length > MAX_CALLER_GROUPS) throw problem(`groups has ${caller.groups.length} names, more than ${MAX_CALLER_GROUPS}`);
  for (const group of caller.groups) {
    const parsed = GroupNameSchema.safeParse(group);
    if (!parsed.success) throw problem(`group ${JSON.stringify(String(group).slice(0, 40))} ${parsed.error.issues[0]!.message}`);
  }
  return caller;
}

const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

/** The middleware that refuses a request without a known token (401) and sets `caller`; none when the server takes no token. */
function tokenAuth(tokens: ServeTokens): MiddlewareHandler | undefined {
  if (tokens.kind === 'none') return undefined;
  const known =
    tokens.kind === 'shared'
      ? [{ digest: digest(tokens.token), caller: { name: SHARED_TOKEN_NAME, actForOthers: true, named: false } }]
      : tokens.tokens.map((t) => ({
          digest: digest(t.token),
          caller: { name: t.name, actForOthers: t.actForOthers, named: true, ...(t.groups?.length ? { groups: t.groups } : {}) },
        }));
  const shared = tokens.kind === 'shared';
  const placeholder = shared ? '<STEWARD_TOKEN>' : '<token>';
  const which = shared ? 'the STEWARD_TOKEN the server was started with' : "your token from the server's STEWARD_TOKENS (or STEWARD_TOKENS_FILE)";
  const refusal = (message: string) => ({ error: { code: 'unauthorized', message } });
  const auth = bearerAuth({
    verifyToken: (given, c) => {
      // Digests compared in constant time, against every token (no early exit): neither a
      // token's length nor its place in the list leaks.
      const wanted = digest(given);
      let found: Caller | undefined;
      for (const k of known) if (timingSafeEqual(wanted, k.digest) && !found) found = k.caller;
      if (found) c.set('caller', found);
      return found !== undefined;
    },
    noAuthenticationHeader: { message: refusal(`This server needs a token: send "Authorization: Bearer ${placeholder}"${shared ? '' : ` with ${which}`}.`) },
    invalidAuthenticationHeader: { message: refusal(`The Authorization header must be "Bearer ${placeholder}".`) },
    invalidToken: { message: refusal(`Wrong token: use ${which}.`) },
  });
  return auth;
}

/**
 * The middleware that refuses a request without `token` (403), given as the header
 * `x-steward-token` or as `?token=` (an EventSource cannot send headers). `fix` says where
 * the right token is.
 */
export function pageTokenAuth(token: string, fix: string): MiddlewareHandler {
  const wanted = digest(token);
  return async (c, next) => {
    const given = c.req.header('x-steward-token') ?? c.req.query('token');
    if (!given || !timingSafeEqual(digest(given), wanted)) throw new HttpError(403, 'forbidden', `Missing or wrong token: ${fix}.`);
    await next();
  };
}

export type Attribution = { ok: true; by?: string; via?: string; groups?: string[] } | { ok: false; code: 'by_not_allowed'; message: string };

/**
 * The fields an event gets from an attribution (nothing from a refused one) and the surface it
 * came through: what serve's routes put on each event they send.
 *
 * @example
 * const event = { ...body, ...attributedAs(attribute(caller, body.by), 'rest') };
 */
export function attributedAs<T extends DecisionChannel>(who: Attribution, through: T): { by?: string; via?: string; groups?: string[]; through: T } {
  if (!who.ok) return { through };
  return {
    ...(who.by !== undefined ? { by: who.by } : {}),
    ...(who.via !== undefined ? { via: who.via } : {}),
    ...(who.groups !== undefined ? { groups: who.groups } : {}),
    through,
  };
}

/**
 * The `by` (and `via`) to record for an event that claims `claimed` as who acted, sent by
 * `caller`, and the `groups` it decides as (access.ts `decisionGroups`). Without a named token
 * `by` stays a claim; with one it is the token's name, or, for a token that may act for
 * others, the claimed name plus the token's name as `via`.
 *
 * @example
 * attribute({ name: 'bob', named: true, actForOthers: false, groups: ['ops'] }, undefined); // { ok: true, by: 'bob', groups: ['ops'] }
 */
export function attribute(caller: Caller | undefined, claimed: string | undefined): Attribution {
  const groups = decisionGroups(caller);
  const as = groups ? { groups } : {};
  if (!caller?.named) return { ok: true, ...(claimed !== undefined ? { by: claimed } : {}), ...as };
  if (claimed === undefined || claimed === caller.name) return { ok: true, by: caller.name, ...as };
  if (caller.actForOthers) return { ok: true, by: claimed, via: caller.name, ...as };
  return {
    ok: false,
    code: 'by_not_allowed',
    message:
      `This is the token of "${caller.name}": the events it sends are by "${caller.name}", not ${JSON.stringify(claimed)}. ` +
      `Leave \`by\` (and X-Steward-User) out, or send with the token of ${JSON.stringify(claimed)}; a ` +
      `front end that acts for its users needs a token marked ${ACT_FOR_OTHERS} in the server's token ` +
      `list.`,
  };
}
