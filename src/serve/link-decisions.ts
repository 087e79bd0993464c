/**
 * What a decision link lets its recipient decide, and the user event each decision is. A link
 * offers the plain decisions of a wait — approve or reject a step, accept or reject an
 * artifact, answer or skip questions, write the input a wait asks for — never the edits or
 * the tool-call decisions, which need the app's own UI. The wait's kind fixes the offer, so a
 * link signs no list of decisions: its wait cannot change kind.
 */
import * as z from 'zod';
import { DEFAULT_LIMITS } from '../core/limits.js';
import type { UserEvent, UserEventType } from '../core/machines/session.events.js';
import type { WaitingReason } from '../core/machines/stream-events.js';
import type { SessionView } from '../core/view.js';
import { foldName } from '../core/text/names.js';
import { linkVia, type LinkClaims } from '../http/decision-links.js';
import { RESERVED_ACTOR_NAMES } from '../runtime/reserved-names.js';

export const LINK_DECISIONS = ['approve', 'reject', 'accept', 'answer', 'skip', 'reply'] as const;
export type LinkDecision = (typeof LINK_DECISIONS)[number];

/** Per wait, the event each decision sends; a wait not listed is decided in the app only. */
const EVENTS: Partial<Record<WaitingReason, Partial<Record<LinkDecision, UserEventType>>>> = {
  approve_step: { approve: 'user_approved_next_step', reject: 'user_rejected_next_step' },
  review_artifact: { accept: 'user_accepted_artifact', reject: 'user_rejected_artifact' },
  worker_questions: { answer: 'user_answered_questions', skip: 'user_skipped_questions' },
  intake: { answer: 'user_answered_questions', skip: 'user_skipped_questions', reply: 'user_submitted_input' },
  input: { answer: 'user_answered_questions', skip: 'user_skipped_questions', reply: 'user_submitted_input' },
  revision: { reply: 'user_submitted_input' },
};

/**
 * The decisions a link offers at the view's wait: those of its kind that the session allows
 * now (`enabledEvents`); none when it does not wait, or waits for what only the app decides.
 *
 * @example
 * linkDecisions(view); // ['approve', 'reject'] in approve_step
 */
export function linkDecisions(view: SessionView): LinkDecision[] {
  const events = view.waitingReason ? EVENTS[view.waitingReason] : undefined;
  if (!events || itemsWait(view)) return [];
  const offered = LINK_DECISIONS.filter((d) => events[d] !== undefined && view.enabledEvents.includes(events[d]));
  // Questions on an input wait: answer them (or skip them); free input is for a wait without any.
  return offered.includes('answer') ? offered.filter((d) => d !== 'reply') : offered;
}

/** Whether the wait is a fan-out's, whose steps or artifacts are items decided one by one (a link names no item). */
const itemsWait = (view: SessionView): boolean =>
  (view.waitingReason === 'approve_step' || view.waitingReason === 'review_artifact') &&
  (view.team?.some((t) => t.status === 'proposed' || t.status === 'submitted') ?? false);

/** The waits a link can decide, for messages. */
export const LINK_WAITS = Object.keys(EVENTS) as WaitingReason[];

/** Why no link can be made for `recipient` at the view's wait: its code (the HTTP error's) and a message that names the fix; null: one can. */
export type NoLink = { code: 'wait_closed' | 'event_refused' | 'invalid_request'; message: string } | null;

/**
 * Whether a link can be made now: the session waits (on `wait`, when named), for a decision a
 * link can take, and `recipient` is no name the journal keeps for the runtime or a worker of
 * the session's package (`workers`), whose decision the session would refuse.
 *
 * @example
 * const refusal = whyNoLink(view, 'alice', pkg.workers); // null in approve_step
 */
export function whyNoLink(view: SessionView, recipient: string, workers: readonly { id: string }[], wait?: number): NoLink {
  if (view.wait === undefined || (wait !== undefined && wait !== view.wait))
    return {
      code: 'wait_closed',
      message:
        `${wait !== undefined ? `Wait ${wait} is not open` : 'No wait is open'}: the session is ${view.state}` +
        `${view.wait !== undefined ? ` (wait ${view.wait})` : ''}. Make the link once it waits for the decision.`,
    };
  if (itemsWait(view))
    return {
      code: 'event_refused',
      message:
        `The session waits for the items of a fan-out, each decided on its own (${view.team!.length} workers): a link decides a wait ` +
        'as a whole, so decide the items in the app (the API with `item` or `artifactId`, `steward send … --item`, the inspector).',
    };
  if (linkDecisions(view).length === 0)
    return {
      code: 'event_refused',
      message: `The session waits in ${view.waitingReason}, which a link cannot decide (links decide ${LINK_WAITS.join(', ')}): decide it in the app.`,
    };
  const folded = foldName(recipient);
  if (RESERVED_ACTOR_NAMES.includes(folded) || workers.some((w) => foldName(w.id) === folded))
    return {
      code: 'invalid_request',
      message: `The recipient ${JSON.stringify(recipient)} is a name the journal keeps for the runtime or a worker of this session's package: give the name of a person.`,
    };
  return null;
}

const ANSWER_KEY = /^answer\.[A-Za-z0-9_-]{1,40}$/;
const MAX_ANSWERS = 100;
const userText = z.string().max(DEFAULT_LIMITS.userTextChars, `longer than ${DEFAULT_LIMITS.userTextChars} characters`);

/**
 * A decision posted to a link, as a form or as JSON alike (a form cannot nest): `decision`,
 * `reason` for a rejection, `text` for a reply, `answer.<question id>` for each answer.
 */
export const LinkDecisionBody = z
  .object({
    decision: z.enum(LINK_DECISIONS),
    reason: userText.optional(),
    text: userText.optional(),
  })
  .catchall(userText)
  .check((ctx) => {
    const extra = Object.keys(ctx.value).filter((k) => k !== 'decision' && k !== 'reason' && k !== 'text');
    for (const key of extra)
      if (!ANSWER_KEY.test(key))
        ctx.issues.push({
          code: 'custom',
          input: key,
          path: [key],
          message: 'is not a field of a decision: give decision, reason, text or answer.<question id>',
        });
    if (extra.length > MAX_ANSWERS) ctx.issues.push({ code: 'custom', input: extra.length, message: `at most ${MAX_ANSWERS} answers` });
  })
  .describe('A decision: `decision`, with `reason` (reject), `text` (reply) or `answer.<question id>` fields (answer); JSON or a form');

export type LinkDecisionBody = z.infer<typeof LinkDecisionBody>;

/**
 * The user event a link's decision sends: for the link's wait, by its recipient, via the
 * link (`through`: 'link', the surface the audit trail names). A problem (a decision the wait does not offer, an answer to no question, a reply
 * without text) is a message to show instead.
 *
 * @example
 * linkEvent(view, claims, { decision: 'reject', reason: 'Too long.' }); // { type: 'user_rejected_next_step', reason: 'Too long.', wait: 3, by: 'alice', via: 'link:…', through: 'link' }
 */
export function linkEvent(view: SessionView, claims: LinkClaims, body: LinkDecisionBody): UserEvent | { problem: string } {
  const type = view.waitingReason ? EVENTS[view.waitingReason]?.[body.decision] : undefined;
  if (!type || !linkDecisions(view).includes(body.decision))
    return { problem: `"${body.decision}" is not a decision this wait allows: ${linkDecisions(view).join(', ') || 'none'}.` };
  // The groups are the link's, as its maker vouched for them: a wait that names its deciders checks them.
  const base = {
    wait: claims.wait,
    by: claims.recipient,
    via: linkVia(claims.linkId),
    ...(claims.groups ? { groups: [...claims.groups] } : {}),
    through: 'link' as const,
  };
  const reason = body.reason?.trim() ? { reason: body.reason.trim() } : {};
  switch (type) {
    case 'user_approved_next_step':
    case 'user_skipped_questions':
      return { type, ...base };
    case 'user_rejected_next_step':
      return { type, ...base, ...reason };
    case 'user_accepted_artifact':
    case 'user_rejected_artifact':
      if (!view.artifact) return { problem: 'No artifact waits for review.' };
      return type === 'user_accepted_artifact' ? { type, ...base, artifactId: view.artifact.id } : { type, ...base, artifactId: view.artifact.id, ...reason };
    case 'user_submitted_input': {
      const text = body.text?.trim();
      return text ? { type, ...base, text } : { problem: 'Write your reply before sending it.' };
    }
    case 'user_answered_questions': {
      const asked = new Set((view.questions ?? []).map((q) => q.id));
      const answers: Record<string, string> = {};
      for (const [key, value] of Object.entries(body)) {
        if (!key.startsWith('answer.') || typeof value !== 'string' || !value.trim()) continue;
        const id = key.slice('answer.'.length);
        if (!asked.has(id)) return { problem: `There is no question "${id}" at this wait.` };
        answers[id] = value.trim();
      }
      return Object.keys(answers).length ? { type, ...base, answers } : { problem: 'Answer at least one question, or skip them.' };
    }
    default:
      return { problem: `"${body.decision}" is decided in the app.` };
  }
}
