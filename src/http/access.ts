/**
 * Who may see and decide a session: the one rule every route of `steward serve` asks (REST,
 * streams and their tickets, AG-UI threads, A2A tasks, the answers to tools' waits, the
 * inspector's shared routes), so that no route is a way around another.
 *
 * A session belongs to its `owner` (the name of the caller who created it) and names
 * `participants`: people by name, groups as `group:NAME`. By default the owner, the
 * participants (by name, or by one of the caller's groups) and the `admin` group see and
 * decide it; anyone else is answered as if it did not exist (404, the body of an unknown id:
 * its existence is not revealed). A caller that names no one — the one shared STEWARD_TOKEN,
 * a server without tokens, an app that authenticates nobody, the inspector's page token —
 * sees and decides every session, as before sessions had owners; so does a token that may act
 * for others (a front end that names its users as `by`, and answers for them). Lists are filtered in the
 * store's query (ListOptions.visibleTo), so paging stays a keyset walk.
 *
 * An app with its own notion of users replaces the rule (`startServe` / `createServeApp`
 * `access`): `access(caller, session, action)` answers for `read` (see it: the view, the
 * journal, the stream, a fork of it) and `decide` (send it an event: answer a wait, approve
 * a tool call); a caller who may read but not decide gets 403 `decide_not_allowed`.
 */
import { ADMIN_GROUP } from '../core/machines/deadlines.js';
import { HttpError, sessionNotFound } from './errors.js';
import { UserError } from '../core/errors.js';
import type { Caller } from './auth.js';
import { visibleTo } from '../store/participants.js';
import type { ListOptions, SessionPage, SessionStore, StoredSession } from '../store/session-store.js';

/** The group whose members see and decide every session under the default rule (and every wait: deadlines.ts). */
export { ADMIN_GROUP };

/** What a caller asks to do with a session: `read` (its view, journal, stream; fork it) or `decide` (send it an event). */
export type AccessAction = 'read' | 'decide';

/** A session as the access rule sees it: whose it is, and who else's. */
export interface AccessSession {
  id: string;
  packageId: string | null;
  /** The name of the caller who created it; null when no named caller did (the CLI, a shared token). */
  owner: string | null;
  /** People (names) and groups (`group:NAME`) who see and decide it besides its owner. */
  participants: readonly string[];
}

/**
 * An app's own rule (`startServe({ access })`, `createServeApp({ access })`): whether `caller`
 * (undefined: a request nobody authenticated) may `action` the session. It replaces the default
 * rule everywhere, lists included (there it is asked for `read` of each session the store lists:
 * a page may then hold fewer sessions than asked, its `next` still going on where it ended).
 */
export type AccessRule = (caller: Caller | undefined, session: AccessSession, action: AccessAction) => boolean | Promise<boolean>;

/**
 * Whether `caller` sees every session under the default rule: a caller that names no one (no
 * caller, the shared token, an app's unnamed caller, the inspector), a token that may act for
 * others (a front end that records its users' names as `by`: it answers for its users' access
 * itself, as it does for who they are) or a member of `admin`.
 *
 * @example
 * seesEverySession({ name: 'olga', named: true, actForOthers: false, groups: ['admin'] }); // true
 */
export function seesEverySession(caller: Caller | undefined): boolean {
  return !caller || !caller.named || caller.actForOthers || (caller.groups ?? []).includes(ADMIN_GROUP);
}

/**
 * The groups a caller's decisions are stamped with (an event's `groups`, which a wait that
 * names its deciders checks: deadlines.ts): `admin` for a caller who sees every session (one
 * trusted caller — no tokens, the shared token, a front end acting for others, the inspector
 * — keeps deciding every wait), else the caller's own groups (none: undefined).
 *
 * @example
 * decisionGroups({ name: 'bob', named: true, actForOthers: false, groups: ['ops'] }); // ['ops']
 * decisionGroups(undefined); // ['admin']
 */
export function decisionGroups(caller: Caller | undefined): string[] | undefined {
  if (seesEverySession(caller)) return [ADMIN_GROUP];
  return caller!.groups?.length ? [...caller!.groups] : undefined;
}

/**
 * The default rule: the owner, the participants (by name, or by one of the caller's groups)
 * and whoever sees every session (seesEverySession) may read and decide; nobody else may do
 * either.
 *
 * @example
 * defaultAccess({ name: 'bob', named: true, actForOthers: false, groups: ['ops'] }, { id: 's1', packageId: null, owner: 'alice', participants: ['group:ops'] }); // true
 */
export function defaultAccess(caller: Caller | undefined, session: AccessSession): boolean {
  if (seesEverySession(caller)) return true;
  const filter = visibleTo(caller!.name, caller!.groups);
  return session.owner === filter.owner || (session.participants ?? []).some((p) => filter.participants.includes(p));
}

/**
 * An app's `access` option, checked: a function, or undefined for the default rule.
 *
 * @example
 * const rule = checkedAccessRule(options.access, 'startServe'); // undefined: the default rule
 */
export function checkedAccessRule(rule: unknown, where: string): AccessRule | undefined {
  if (rule === undefined) return undefined;
  if (typeof rule !== 'function')
    throw new UserError(
      `${where}: access must be a function (caller, session, action) => boolean, or left out for the default rule (owner, participants, admin).`,
    );
  return rule as AccessRule;
}

/** Store pages a list with an app's own rule reads for one answer, at most: a page of a caller who sees little may come back short. */
const MAX_RULE_LIST_READS = 20;

/**
 * The access rule of one app (the default one, or the app's `access`) over its store: what the
 * routes ask before they touch a session, and the lists a caller sees.
 *
 * @example
 * const access = new SessionAccess(store);
 * await access.require(c.get('caller'), id, 'decide'); // a 404 as for an unknown id, or a 403 decide_not_allowed
 */
export class SessionAccess {
  constructor(
    private readonly store: SessionStore,
    private readonly rule?: AccessRule,
  ) {}

  /** Whether `caller` may `action` the session (the app's rule, else the default one). */
  async allows(caller: Caller | undefined, session: AccessSession, action: AccessAction): Promise<boolean> {
    if (!this.rule) return defaultAccess(caller, session);
    return (await this.rule(caller, session, action)) === true;
  }

  /**
   * Throws unless `caller` may `action` session `id`: a 404 `session_not_found` with the body
   * of an unknown id when it may not read it (or there is none), a 403 `decide_not_allowed` when
   * it may read but not decide. The stored session it read (`stored`: one the route has read
   * already); undefined when the default rule lets the caller see every session, which it then
   * does not read (the route finds an unknown id itself, as it always did).
   */
  async require(caller: Caller | undefined, id: string, action: AccessAction, stored?: StoredSession): Promise<StoredSession | undefined> {
    if (!this.rule && seesEverySession(caller)) return stored;
    const session = stored ?? (await this.store.load(id));
    if (!session || !(await this.allows(caller, session, 'read'))) throw sessionNotFound(id);
    if (action === 'decide' && !(await this.allows(caller, session, 'decide'))) throw decideNotAllowed(id, caller);
    return session;
  }

  /** `require`, and the session itself (loaded when the rule did not need it): for a route that needs it to exist. */
  async requireExisting(caller: Caller | undefined, id: string, action: AccessAction): Promise<StoredSession> {
    const session = (await this.require(caller, id, action)) ?? (await this.store.load(id));
    if (!session) throw sessionNotFound(id);
    return session;
  }

  /**
   * One page of the sessions `caller` may read, most recently updated first: the default rule
   * filters in the store's query (ListOptions.visibleTo); an app's rule is asked for each
   * session listed, reading on until the page is full or MAX_RULE_LIST_READS store pages were read.
   */
  async list(caller: Caller | undefined, options: { limit: number; after: string | null }): Promise<SessionPage> {
    if (!this.rule) {
      const filter = seesEverySession(caller) ? undefined : visibleTo(caller!.name, caller!.groups);
      const page = await this.store.list({ ...options, ...(filter ? { visibleTo: filter } : {}) } satisfies ListOptions);
      // The store filtered already; a store of an app's that ignores `visibleTo` must not show more.
      return filter ? { ...page, sessions: page.sessions.filter((s) => defaultAccess(caller, s)) } : page;
    }
    const sessions: SessionPage['sessions'] = [];
    let after = options.after;
    for (let reads = 0; reads < MAX_RULE_LIST_READS; reads++) {
      // Never more than the page still holds: `next` of what was read is then where this page ends.
      const page = await this.store.list({ limit: options.limit - sessions.length, after });
      for (const session of page.sessions) if (await this.allows(caller, session, 'read')) sessions.push(session);
      after = page.next;
      if (after === null || sessions.length === options.limit) break;
    }
    return { sessions, next: after };
  }
}

/** A caller who may read the session but not decide it (an app's rule said so). */
function decideNotAllowed(id: string, caller: Caller | undefined): HttpError {
  return new HttpError(
    403,
    'decide_not_allowed',
    `${caller ? `"${caller.name}"` : 'This caller'} may see session "${id}" but not decide it: nothing was sent. Ask its owner or the app's administrator for the right to decide.`,
  );
}
