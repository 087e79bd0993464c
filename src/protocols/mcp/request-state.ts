/**
 * The request state of an MCP tool call that waits for a person (the 2026-07-28 protocol's
 * `input_required`): it names the session, the wait the forms ask about and the caller it was
 * issued to, and the host sends it back with the answers. Signed, not stored —
 * `base64url(JSON claims) "." base64url(HMAC-SHA256)` — so any server with the same key
 * (`src/http/signing-key.ts`: servers with the same tokens) continues the call, and a host
 * cannot make one up for another session or another caller.
 *
 * It has no expiry: a person may take days to answer, and a state can do no harm once its
 * wait is answered. The wait it names closes with the first answer, and an answer naming a
 * closed wait is never applied to the next (a repeat of the same answer is a harmless
 * no-op); wait numbers only grow within a session, so an old state never fits a later wait.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import * as z from 'zod';
import type { ServeTokens } from '../../http/tokens.js';
import { signingKey } from '../../http/signing-key.js';
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

const b64 = (data: string) => Buffer.from(data).toString('base64url');

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
    const body = b64(JSON.stringify(claims));
    return `${body}.${this.mac(body)}`;
  }

  /** What `state` says, if this key signed it for `caller`; else RequestStateRefused naming why. */
  verify(state: string, caller: string | undefined): RequestState {
    const dot = state.indexOf('.');
    if (state.length > MAX_STATE_CHARS || dot < 1) throw new RequestStateRefused('the request state is malformed');
    const body = state.slice(0, dot);
    const given = Buffer.from(state.slice(dot + 1), 'base64url');
    const wanted = Buffer.from(this.mac(body), 'base64url');
    if (given.length !== wanted.length || !timingSafeEqual(given, wanted)) throw new RequestStateRefused('the request state is not one this server signed');
    let claims: z.infer<typeof Claims>;
    try {
      claims = Claims.parse(JSON.parse(Buffer.from(body, 'base64url').toString('utf8')));
    } catch {
      throw new RequestStateRefused('the request state is malformed');
    }
    if (claims.c !== caller) throw new RequestStateRefused('the request state was issued to another caller');
    return { sessionId: claims.s, wait: claims.w, ...(claims.c !== undefined ? { caller: claims.c } : {}) };
  }

  private mac(body: string): string {
    return createHmac('sha256', this.key).update(body).digest('base64url');
  }
}
