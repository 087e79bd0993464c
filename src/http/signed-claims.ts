/**
 * Claims a server signs and takes back from a client (stream tickets, decision links, MCP
 * request states): `base64url(JSON claims) "." base64url(HMAC-SHA256)`. Signed, not stored: no
 * table and no shared memory, so any server with the same key takes what another signed.
 *
 * The key of the stream tickets and the request states is derived from the server's bearer
 * tokens (`signingKey`), so servers configured alike (several on one database behind a load
 * balancer) take each other's, and changing a token rotates it; or from a secret an embedding
 * app gives (it authenticates on its own). A server with neither signs with a random key: what
 * it signs is checked by this process only. Each use derives its own key (`context`), so a
 * token of one kind is never taken for another.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type * as z from 'zod';
import type { ServeTokens } from './tokens.js';

/**
 * @example
 * const key = signingKey('steward stream ticket v1', { kind: 'shared', token: process.env.STEWARD_TOKEN! });
 */
export function signingKey(context: string, tokens: ServeTokens, secret?: string): Buffer {
  const material =
    secret !== undefined
      ? `secret\n${secret}`
      : tokens.kind === 'shared'
        ? `shared\n${tokens.token}`
        : tokens.kind === 'named'
          ? `named\n${tokens.tokens
              // Groups are part of what a signed token vouches for: changing them rotates the key (none: as before groups).
              .map((t) => `${t.name} ${t.token} ${t.actForOthers}${t.groups?.length ? ` ${t.groups.join(',')}` : ''}`)
              .sort()
              .join('\n')}`
          : `random\n${randomBytes(32).toString('hex')}`;
  return createHash('sha256').update(`${context}\n${material}`).digest();
}

const mac = (key: Buffer, body: string) => createHmac('sha256', key).update(body).digest('base64url');

/**
 * @example
 * const ticket = signClaims(key, { v: 1, s: 's-1', e: Date.now() + 60_000 });
 */
export function signClaims(key: Buffer, claims: object): string {
  const body = Buffer.from(JSON.stringify(claims)).toString('base64url');
  return `${body}.${mac(key, body)}`;
}

/**
 * The claims `token` carries if `key` signed it and they match `schema`; else why not: `forged`
 * (another key's, or altered) or `malformed` (longer than `maxChars`, no signature, or signed
 * claims of another shape: another version's).
 *
 * @example
 * const opened = openClaims(key, ticket, Claims, 2048); // { ok: true, claims } | { ok: false, why: 'forged' }
 */
export function openClaims<T>(
  key: Buffer,
  token: string,
  schema: z.ZodType<T>,
  maxChars: number,
): { ok: true; claims: T } | { ok: false; why: 'malformed' | 'forged' } {
  const dot = token.indexOf('.');
  if (token.length > maxChars || dot < 1) return { ok: false, why: 'malformed' };
  const body = token.slice(0, dot);
  const given = Buffer.from(token.slice(dot + 1), 'base64url');
  const wanted = Buffer.from(mac(key, body), 'base64url');
  // Constant time; lengths differ only for a token that is malformed anyway.
  if (given.length !== wanted.length || !timingSafeEqual(given, wanted)) return { ok: false, why: 'forged' };
  const parsed = schema.safeParse(parseJson(Buffer.from(body, 'base64url').toString('utf8')));
  return parsed.success ? { ok: true, claims: parsed.data } : { ok: false, why: 'malformed' };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
