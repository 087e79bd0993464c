/**
 * The request state of an MCP tool call that waits for a person (the 2026-07-28 protocol's
 * `input_required`): it names the session, the wait the forms ask about and the caller it was
 * issued to, and the host sends it back with the answers. Signed, not stored —
 * `src/http/signed-claims.ts` — so any server with the same key (servers with the same tokens) continues the call, and a host
 * cannot make one up for another session or another caller.
 *
 * It has no expiry: a person may take days to answer, and a state can do no harm once its
 * wait is answered. The wait it names closes with the first answer, and an answer naming a
 * closed wait is never applied to the next (a repeat of the same answer is a harmless
 * no-op); wait numbers only grow within a session, so an old state never fits a later wait.
 */
import * as z from 'zod';
import type { ServeTokens } from '../../http/tokens.js';
import { openClaims, signClaims, signingKey } from '../../http/signed-claims.js';
import { SESSION_ID_MAX_CHARS } from '../../ids.js';
import { MAX_CALLER_NAME_CHARS } from '../../store/participants.js';

const CONTEXT = 'steward mcp request state v1';
/** Longer than any state this module signs: a longer one is not looked at. */
const MAX_STATE_CHARS = 2048;

const Claims = z.strictObject({
  v: z.literal(1),
  /** The session. */
  s: z.string().min(1).max(SESSION_ID_MAX_CHARS),
  /** The wait the forms asked about. */
  w: z.number().int().positive(),
  /** The caller it was issued to (none: a server that names no caller). */
  c: z.string().max(MAX_CALLER_NAME_CHARS).optional(),
});

/** What a request state says: the session and the wait the host's answers are for. */
export interface RequestState {
  sessionId: string;
  wait: number;
  caller?: string;
}

/** A request state this server did not sign, or signed for another caller. */
export class RequestStateRefused extends Error {}

/**
 * Signs and checks request states with one key.
 *
 * @example
 * const states = RequestStates.forTokens({ kind: 'shared', token: process.env.STEWARD_TOKEN! });
 * const state = states.sign({ sessionId: 's1', wait: 4, caller: 'ana' });
 * states.verify(state, 'ana'); // { sessionId: 's1', wait: 4, caller: 'ana' }, or throws RequestStateRefused
 */
export class RequestStates {
  private constructor(private readonly key: Buffer) {}

  /** The key every server with the same tokens derives; `secret` instead when given (an app's own auth); none of them: this process's own. */
  static forTokens(tokens: ServeTokens, secret?: string): RequestStates {
    return new RequestStates(signingKey(CONTEXT, tokens, secret));
  }

  sign(state: RequestState): string {
    const claims: z.infer<typeof Claims> = { v: 1, s: state.sessionId, w: state.wait, ...(state.caller !== undefined ? { c: state.caller } : {}) };
    return signClaims(this.key, claims);
  }

  /** What `state` says, if this key signed it for `caller`; else RequestStateRefused naming why. */
  verify(state: string, caller: string | undefined): RequestState {
    const opened = openClaims(this.key, state, Claims, MAX_STATE_CHARS);
    if (!opened.ok)
      throw new RequestStateRefused(opened.why === 'forged' ? 'the request state is not one this server signed' : 'the request state is malformed');
    const claims = opened.claims;
    if (claims.c !== caller) throw new RequestStateRefused('the request state was issued to another caller');
    return { sessionId: claims.s, wait: claims.w, ...(claims.c !== undefined ? { caller: claims.c } : {}) };
  }
}
