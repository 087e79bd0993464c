/**
 * What an A2A message says to a session: the user event it stands for at the session's wait
 * (its first request, or an answer checked with the wait's schema,
 * `src/protocols/ag-ui/interrupts.ts`; at a fan-out's wait, for the item it names), the wait it
 * names, and its id as the send's idempotency key. Decided before anything is sent.
 */
import { RequestMalformedError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import type { Message } from '@a2a-js/sdk';
import type { UserEvent } from '../../core/machines/session.events.js';
import { idempotencyKeyProblem } from '../../runtime/send-keys.js';
import { answerSchema, eventForAnswer } from '../ag-ui/interrupts.js';
import { interruptWait, otherItemNamed, withInterruptTarget } from '../ag-ui/interrupt-ids.js';
import { partsOf, type A2AThread } from './tasks.js';

export const FIRST_REQUEST_TEXT = 'The first message is the request: send it as a text part (what the team should do).';

/**
 * The message's id as the send's idempotency key: a client that sends the same message again
 * (a retry after a timeout) gets the task as it is, the answer counted once. An id the key rule
 * refuses sends without a key.
 *
 * @example
 * const key = messageKey(message); // 'a2a:m-7', or undefined for an id the key rule refuses
 */
export function messageKey(message: Message): string | undefined {
  const key = `a2a:${message.messageId}`;
  return message.messageId && idempotencyKeyProblem(key) === null ? key : undefined;
}

/**
 * The user event a message stands for at the session's wait: its first request, or the answer to the wait.
 *
 * @example
 * const event = eventOf(thread, message); // { type: 'user_rejected_next_step', item: 'run_south', reason: 'Not south.', wait: 4 }
 */
export function eventOf(thread: A2AThread, message: Message): UserEvent {
  const { view } = thread;
  const { data, text } = partsOf(message);
  if (view.phase === 'running')
    throw new UnsupportedOperationError({ message: `Task ${view.id} is working: follow it with SubscribeToTask (tasks/resubscribe), then answer its wait.` });
  if (view.phase === 'done') throw new UnsupportedOperationError({ message: `Task ${view.id} is completed: start a new one (a message without taskId).` });
  if (thread.firstRequest) {
    if (!text) throw new RequestMalformedError({ message: FIRST_REQUEST_TEXT });
    return { type: 'user_submitted_input', text, wait: view.wait! };
  }
  if (data.length > 1) throw new RequestMalformedError({ message: 'An answer has one data part (the object the responseSchema describes), not several.' });
  const crossed = otherItemNamed(view.id, namedInterrupt(message), payloadOf(message));
  if (crossed) throw new RequestMalformedError({ message: `${crossed} Nothing was sent to the session.` });
  const payload = withNamedCall(payloadOf(message), message, view.id);
  const schema = JSON.stringify(thread.interrupt?.responseSchema ?? {});
  if (payload === undefined)
    throw new RequestMalformedError({
      message: `Task ${view.id} waits (${view.waitingReason}): answer with a data part matching its responseSchema ${schema}.`,
    });
  if (data.length === 0 && !answerSchema(view).safeParse(payload).success)
    throw new RequestMalformedError({
      message: `Task ${view.id} waits (${view.waitingReason}) for more than text: answer with a data part matching its responseSchema ${schema}. Nothing was sent to the session.`,
    });
  const answer = eventForAnswer(view, payload);
  if (!answer.ok) throw new RequestMalformedError({ message: `Task ${view.id} waits (${view.waitingReason}): ${answer.message}` });
  // The answer names the wait open as it was read (prepare() puts the message's own, when it names one):
  // if another answer closes that wait first, the session refuses this one instead of applying it to the next.
  return { ...answer.event, wait: view.wait! };
}

/**
 * The answer a message carries, for the tool call or the item its interrupt id names when it names none itself (`withInterruptTarget`).
 *
 * @example
 * withNamedCall({ approved: true }, message, 's1'); // { approved: true, item: 'run_north' } for metadata.steward.interruptId 's1#w4/item/run_north'
 */
export function withNamedCall(payload: unknown, message: Message, id: string): unknown {
  return withInterruptTarget(id, namedInterrupt(message), payload);
}

/** The interrupt id a message names in `metadata.steward.interruptId`, if it names one. */
function namedInterrupt(message: Message): string | undefined {
  const interruptId = (message.metadata as { steward?: { interruptId?: unknown } } | undefined)?.steward?.interruptId;
  return typeof interruptId === 'string' ? interruptId : undefined;
}

/**
 * The answer a message carries: its data part, else its text as `{ text }`.
 *
 * @example
 * payloadOf(message); // { approved: false, reason: 'Not now.' } for a message with that data part
 */
export function payloadOf(message: Message): unknown {
  const { data, text } = partsOf(message);
  return data.length === 1 ? data[0] : text ? { text } : undefined;
}

/**
 * The wait a message says it answers: `metadata.steward.interruptId` (the id of the status
 * message's interrupt) or `metadata.steward.wait`, as the input-required status gives them.
 *
 * @example
 * waitNamedBy(message, 's1'); // 4 for metadata.steward.interruptId 's1#w4/item/run_north'
 */
export function waitNamedBy(message: Message, id: string): number | undefined {
  const steward = (message.metadata as { steward?: { interruptId?: unknown; wait?: unknown } } | undefined)?.steward;
  if (typeof steward?.interruptId === 'string') {
    const wait = interruptWait(id, steward.interruptId);
    if (wait === null)
      throw new RequestMalformedError({
        message: `metadata.steward.interruptId "${steward.interruptId.slice(0, 80)}" names no wait of task ${id}: send the interruptId of its status message.`,
      });
    return wait;
  }
  if (steward?.wait === undefined) return undefined;
  if (typeof steward.wait !== 'number' || !Number.isSafeInteger(steward.wait) || steward.wait < 1)
    throw new RequestMalformedError({
      message: `metadata.steward.wait must be a wait's number (a positive integer), as the status message's metadata gives it.`,
    });
  return steward.wait;
}
