/**
 * What a deadline that passed does to the session (deadlines.ts has the rules): the pure
 * updates behind the chart's actions `expireStep`, `expireArtifact`, `expireToolCalls`,
 * `escalateWait` and `remindOfWait`. An expired decision is answered as a person's "no" would
 * be, in words that say nobody decided in time; the model reads them like any rejection.
 */
import { pendingToolCalls, rejectToolCall } from './tool-calls.js';
import { nextDeadline, type OpenDeadline } from './deadlines.js';
import type { SessionContext } from './session.context.js';
import type { WaitingReason } from './stream-events.js';
import * as update from './session.updates.js';
import { decisionDigest } from './waits.js';

type Update = Partial<SessionContext>;

/** Who a deadline's decision is by, as the journal and the reports name it (a reserved name: no person can send it). */
export const STEWARD = 'steward';

/** The reason an expired decision gives, e.g. "Nobody decided within 24h." */
export function expiryReason(deadline: OpenDeadline | null): string {
  return `Nobody decided within ${deadline?.after ?? 'the time allowed'}.`;
}

/**
 * The proposed step is rejected: its approval expired.
 *
 * @example
 * const changes = expireStep(context); // the manager is told the step was rejected, and why
 */
export function expireStep(context: SessionContext): Update {
  return update.tellManagerStepRejected(context, undefined, context.waits.deadline?.after ?? 'the time allowed');
}

/**
 * The artifact under review is rejected: its review expired (the session waits for the revision, as after any rejection).
 *
 * @example
 * const changes = expireArtifact(context);
 */
export function expireArtifact(context: SessionContext): Update {
  const pending = context.artifacts.find((a) => a.status === 'pending_review');
  return pending ? update.rejectArtifact(context, pending.id, expiryReason(context.waits.deadline)) : {};
}

/**
 * Every call of the wait not yet decided is rejected (those decided keep their decision).
 *
 * @example
 * const changes = expireToolCalls(context); // then the approved ones run
 */
export function expireToolCalls(context: SessionContext): Update {
  let current = context;
  for (const call of pendingToolCalls(context)) {
    current = { ...current, ...rejectToolCall(current, call.callId, expiryReason(context.waits.deadline), STEWARD) };
  }
  return { reply: current.reply, transcripts: current.transcripts };
}

/**
 * The wait goes to the group its rule names: the open wait closes (a decision for it is
 * refused from now on) and the next one opens for that group, with the chain's next rule.
 *
 * @example
 * const changes = escalateWait(context, 'approve_step', event); // waits.opened + 1, deciders [to]
 */
export function escalateWait(context: SessionContext, reason: WaitingReason, event: { type: string }): Update {
  const { waits } = context;
  return {
    waits: {
      opened: waits.opened + 1,
      answered: { wait: waits.opened, digest: decisionDigest(event) },
      deciders: waits.deadline?.to ? [waits.deadline.to] : waits.deciders,
      deadline: nextDeadline(context, reason),
    },
  };
}

/**
 * People were reminded: the wait stays as it is, with the chain's next rule.
 *
 * @example
 * const changes = remindOfWait(context, 'approve_step'); // waits.deadline: the next rule, or null
 */
export function remindOfWait(context: SessionContext, reason: WaitingReason): Update {
  return { waits: { ...context.waits, deadline: nextDeadline(context, reason) } };
}
