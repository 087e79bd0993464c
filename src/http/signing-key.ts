/**
 * The key a server signs its short-lived tokens with (stream tickets, MCP request states):
 * derived from its bearer tokens, so servers configured alike (several on one database behind
 * a load balancer) take each other's, and changing a token rotates it; or from a secret an
 * embedding app gives (it authenticates on its own). A server with neither signs with a random
 * key: what it signs is checked by this process only. Each use derives its own key (`context`),
 * so a token of one kind is never taken for another.
 */
import { createHash, randomBytes } from 'node:crypto';
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
