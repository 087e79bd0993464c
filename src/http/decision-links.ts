/**
 * Decision links: a URL a person opens in any browser to decide one wait of one session
 * (approve or reject a step, accept or reject an artifact, answer questions) without a
 * token of the API. The link names its recipient, who is recorded as the decision's `by`.
 *
 * The token in the link is signed, not stored: `base64url(JSON claims) "." base64url(HMAC-SHA256)`
 * over the session, the wait's number, the recipient, an expiry, a random id and, when the
 * link's maker gave them, the groups the recipient decides as (a wait that names its deciders
 * takes the decision only from one of them: src/core/machines/deadlines.ts). No table and
 * no shared memory: any server with the same secret takes the links another issued.
 *
 * Good for one decision without a store of used links: the link names the wait, a decision
 * closes it, and the chart refuses every later decision naming a closed wait (`wait_closed`),
 * on any server. Wait numbers only grow within a session, and a store never reuses a
 * session id, so a link can never fit a later wait.
 *
 * The secret is the operator's (STEWARD_LINK_SECRET, a file, `linkSecret`): unlike the
 * stream tickets' key it is not derived from the bearer tokens, so rotating an API token does
 * not void the links in people's inboxes, and a server without tokens can issue links too.
 */
import { createHash, randomBytes } from 'node:crypto';
import { openClaims, signClaims } from './signed-claims.js';
import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import * as z from 'zod';
import { UserError } from '../core/errors.js';
import { ActorNameSchema } from '../core/machines/session.events.js';
import { GroupNameSchema, INTERVAL_PATTERN, intervalMs } from '../core/machines/deadlines.js';
import { SESSION_ID_MAX_CHARS } from '../ids.js';

/** The shortest secret taken: 32 bytes, as `openssl rand -hex 32` (64 characters) more than gives. */
export const MIN_LINK_SECRET_BYTES = 32;
const MAX_LINK_SECRET_BYTES = 4096;
/** Groups a link may name for its recipient, at most: a wait names a few deciders, and each group lengthens the URL. */
export const MAX_LINK_GROUPS = 4;
/**
 * Longer than any token this module signs (a 200-character id, a 120-character name and four
 * 64-character groups, each up to 4 bytes a character): a longer one is not looked at.
 */
export const MAX_LINK_TOKEN_CHARS = 4096;
const CONTEXT = 'steward decision link v1';

/** How long a link is good for, at least, at most and by default. */
export const MIN_LINK_LIFETIME_MS = 60_000;
export const MAX_LINK_LIFETIME_MS = 30 * 24 * 3600_000;
export const DEFAULT_LINK_EXPIRES_IN = '24h';

/** How long a link lasts, written as a deadline's interval is (`90s`, `30m`, `24h`, `7d`), from 1 minute to 30 days. */
export const ExpiresInSchema = z
  .string()
  .trim()
  .regex(INTERVAL_PATTERN, 'must be a number and a unit, e.g. 30m, 24h or 7d (s, m, h, d)')
  .transform(intervalMs)
  .refine((ms) => ms >= MIN_LINK_LIFETIME_MS && ms <= MAX_LINK_LIFETIME_MS, 'must be from 1 minute (1m) to 30 days (30d)');

/** The random part of a link that names it in the journal (`via: link:<id>`) without being a credential. */
const LinkIdSchema = z.string().regex(/^[A-Za-z0-9_-]{12}$/);

const Claims = z.strictObject({
  v: z.literal(1),
  /** The session. */
  s: z.string().min(1).max(SESSION_ID_MAX_CHARS),
  /** The wait's number (the view's `wait`). */
  w: z.number().int().positive(),
  /** Who decides: the decision's `by`. */
  r: ActorNameSchema,
  /** Expiry, epoch ms. */
  e: z.number().int().positive(),
  /** The link's id. */
  n: LinkIdSchema,
  /** The groups the recipient decides as (the decision's `groups`); absent: none. */
  g: z.array(GroupNameSchema).min(1).max(MAX_LINK_GROUPS).optional(),
});

/** The groups a link names for its recipient, as its maker gives them: 1 to MAX_LINK_GROUPS group names, each once. */
export const LinkGroupsSchema = z
  .array(GroupNameSchema)
  .min(1, 'must name at least one group (or leave the field out)')
  .max(MAX_LINK_GROUPS, `must name at most ${MAX_LINK_GROUPS} groups`)
  .transform((groups) => [...new Set(groups)]);

/** What a link is for, once its signature and shape are checked. */
export interface LinkClaims {
  sessionId: string;
  wait: number;
  recipient: string;
  /** Epoch ms after which the link decides nothing. */
  expiresAt: number;
  /** Names the link in the journal (`via: link:<id>`) and in logs; not a credential. */
  linkId: string;
  /** The groups the recipient decides as (the decision's `groups`); absent: none. */
  groups?: string[];
}

export interface IssuedLink {
  token: string;
  linkId: string;
  /** As recorded: trimmed. */
  recipient: string;
  /** ISO time after which the link decides nothing. */
  expiresAt: string;
  /** The groups the recipient decides as; absent: none. */
  groups?: string[];
}

/** A token that is not a link of this secret, or no longer good. `forged` covers every token not signed with the secret, malformed ones included. */
export type LinkCheck = { ok: true; claims: LinkClaims } | { ok: false; why: 'forged' } | { ok: false; why: 'expired'; claims: LinkClaims };

const b64 = (data: Buffer | string) => Buffer.from(data).toString('base64url');

/**
 * Signs and checks decision links with one secret.
 *
 * @example
 * const links = new DecisionLinks(process.env.STEWARD_LINK_SECRET!);
 * const { token } = links.issue({ session: 's-1', wait: 3, recipient: 'alice', expiresIn: '24h' });
 * links.check(token); // { ok: true, claims: { sessionId: 's-1', wait: 3, recipient: 'alice', … } }
 */
export class DecisionLinks {
  private readonly key: Buffer;
  private readonly now: () => number;

  /** `secret`: at least 32 bytes (checkLinkSecret); `now`: the clock (tests move it). */
  constructor(secret: string, options: { now?: () => number } = {}) {
    checkLinkSecret(secret, 'The link secret');
    // Its own key: the same secret used elsewhere signs nothing this module would take.
    this.key = createHash('sha256').update(`${CONTEXT}\n${secret}`).digest();
    this.now = options.now ?? Date.now;
  }

  /** A link's token for `recipient` (in `groups`, if given) to decide `wait` of `session` within `expiresIn` (`24h`, `30m`, `7d`). */
  issue(options: { session: string; wait: number; recipient: string; expiresIn?: string; groups?: readonly string[] }): IssuedLink {
    const expiresIn = ExpiresInSchema.safeParse(options.expiresIn ?? DEFAULT_LINK_EXPIRES_IN);
    if (!expiresIn.success) throw new UserError(`expiresIn ${JSON.stringify(options.expiresIn)} ${expiresIn.error.issues[0]!.message}.`);
    const parsed = Claims.safeParse({
      v: 1,
      s: options.session,
      w: options.wait,
      r: options.recipient,
      e: this.now() + expiresIn.data,
      n: b64(randomBytes(9)),
      ...(options.groups?.length ? { g: [...new Set(options.groups)] } : {}),
    });
    if (!parsed.success) {
      const field: Record<string, string> = { s: 'session', w: 'wait', r: 'recipient', g: 'groups' };
      const problems = parsed.error.issues.map((i) => `${field[String(i.path[0])] ?? String(i.path[0])} ${i.message}`);
      throw new UserError(`Cannot make this decision link: ${problems.join('; ')}.`);
    }
    const claims = parsed.data;
    return {
      token: signClaims(this.key, claims),
      linkId: claims.n,
      recipient: claims.r,
      expiresAt: new Date(claims.e).toISOString(),
      ...(claims.g ? { groups: claims.g } : {}),
    };
  }

  /** What `token` is a link for, if this secret signed it and it has not expired. */
  check(token: string): LinkCheck {
    // Malformed too (signed by this secret yet not a link: another version's shape) is no link of ours.
    const opened = openClaims(this.key, token, Claims, MAX_LINK_TOKEN_CHARS);
    if (!opened.ok) return { ok: false, why: 'forged' };
    const parsed = opened.claims;
    const claims: LinkClaims = {
      sessionId: parsed.s,
      wait: parsed.w,
      recipient: parsed.r,
      expiresAt: parsed.e,
      linkId: parsed.n,
      ...(parsed.g ? { groups: parsed.g } : {}),
    };
    return parsed.e <= this.now() ? { ok: false, why: 'expired', claims } : { ok: true, claims };
  }
}

/** The `via` a link's decision is journalled with. */
export const linkVia = (linkId: string): string => `link:${linkId}`;

/**
 * Refuses a secret too short to sign with (`where` names it: the variable, the file, the option).
 *
 * @example
 * checkLinkSecret(process.env.STEWARD_LINK_SECRET ?? '', 'STEWARD_LINK_SECRET');
 */
export function checkLinkSecret(secret: string, where: string): void {
  const bytes = Buffer.byteLength(secret, 'utf8');
  if (bytes < MIN_LINK_SECRET_BYTES)
    throw new UserError(
      `${where} is ${bytes} bytes, too short to sign decision links: use at least ${MIN_LINK_SECRET_BYTES} random bytes, e.g. \`openssl rand -hex 32\`.`,
    );
  if (bytes > MAX_LINK_SECRET_BYTES) throw new UserError(`${where} is ${bytes} bytes, more than a secret (${MAX_LINK_SECRET_BYTES}): is it the right value?`);
}

/**
 * The link secret the environment gives: `STEWARD_LINK_SECRET`, or the file `file`
 * (`--link-secret-file`) or `STEWARD_LINK_SECRET_FILE` names (its content, trimmed); at
 * most one, a relative path read from `cwd`. Undefined: links are off. Never on the command line itself: every `ps` shows it.
 *
 * @example
 * const linkSecret = linkSecretFromEnv(process.env, flags.linkSecretFile);
 * await startServe({ runtime, store, ...(linkSecret ? { linkSecret } : {}) });
 */
export function linkSecretFromEnv(env: NodeJS.ProcessEnv = process.env, file?: string, cwd: string = process.cwd()): string | undefined {
  const path = file?.trim() || env.STEWARD_LINK_SECRET_FILE?.trim() || undefined;
  const value = env.STEWARD_LINK_SECRET?.trim() || undefined;
  const pathFrom = file?.trim() ? '--link-secret-file' : 'STEWARD_LINK_SECRET_FILE';
  if (path && value) throw new UserError(`STEWARD_LINK_SECRET and ${pathFrom} are both set: set one of them.`);
  if (value) {
    checkLinkSecret(value, 'STEWARD_LINK_SECRET');
    return value;
  }
  if (!path) return undefined;
  const absolute = resolve(cwd, path);
  let size: number;
  try {
    size = statSync(absolute).size;
  } catch (error) {
    throw new UserError(
      `${pathFrom} ${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}): give the path of a file holding the secret.`,
    );
  }
  if (size > MAX_LINK_SECRET_BYTES * 2) throw new UserError(`${pathFrom} ${path} has ${size} bytes, more than a secret: is it the right file?`);
  const secret = readFileSync(absolute, 'utf8').trim();
  checkLinkSecret(secret, `${pathFrom} ${path}`);
  return secret;
}
