/**
 * The calls of one tool host whose server asked a question on the live connection and waits
 * inside the call for a person (a revision before 2026-07-28), each held under the key its
 * caller named it with (`heldKey`). The caller gets an `input_required` outcome marked `live`;
 * its next `callTool` with `answersHeld` sends the answer and waits for the call's end. The
 * question lives on this host's connection only: a key with nothing held under it (another
 * process, a lost connection, a cancelled question) is `live_input_lost`, never a new call.
 */
import type { ElicitResult, InputResponses } from '@modelcontextprotocol/client';
import { hiddenOutcome, type Outcome } from './call-tool.js';
import type { CallUnderWay } from './call-under-way.js';
import type { CallToolRequest, ServerRef } from './types.js';

/** The key of the one request of a live `input_required` outcome. */
export const LIVE_REQUEST_KEY = 'input';

/** A call being followed, and what the host knows of it. */
export interface FollowedCall {
  call: CallUnderWay;
  ref: ServerRef;
  /** `server.tool`, for messages. */
  name: string;
  hide: (text: string) => string;
}

export class HeldCalls {
  private readonly held = new Map<string, FollowedCall & { forget: () => void }>();

  constructor(
    private readonly hooks: {
      /** Questions held at most (`limits.heldQuestions`). */
      limit: number;
      /** The call ended with the server's result. */
      onResult: (ref: ServerRef) => void;
      /** Whether the host is closing: a question asked then is not held. */
      closing: () => boolean;
      /** Logs a line about the call's server (the host prefixes it, hides secrets, makes it safe). */
      log: (followed: FollowedCall, line: string) => void;
    },
  ) {}

  /** Follows `followed` for `request`'s caller until it ends, or until its server asks (the question is then held under `heldKey`). */
  async follow(followed: FollowedCall, request: CallToolRequest): Promise<Outcome> {
    const step = await followed.call.next(request.signal);
    if (step.kind === 'ended') {
      if (step.outcome.kind === 'result') this.hooks.onResult(followed.ref);
      return hiddenOutcome(step.outcome, followed.hide);
    }
    if (this.hooks.closing() || request.heldKey === undefined) {
      followed.call.cancel();
      return this.follow(followed, request);
    }
    this.hold(request.heldKey, followed);
    const asked: Outcome = { kind: 'input_required', requests: { [LIVE_REQUEST_KEY]: { method: 'elicitation/create', params: step.params } }, live: true };
    return hiddenOutcome(asked, followed.hide);
  }

  /** The answers of `request` to the question held under its `heldKey`; the call's outcome once it ends. */
  async answer(request: CallToolRequest, name: string): Promise<Outcome> {
    const followed = request.heldKey === undefined ? undefined : this.take(request.heldKey);
    if (!followed)
      return {
        kind: 'failed',
        error: {
          reason: 'live_input_lost',
          message: `The question ${name} asked during its call is no longer held here (the process restarted, the server's connection was lost, or the question was cancelled), so the answer could not reach it. The call may or may not have taken effect; it was not made again.`,
        },
      };
    // A caller stopped already (its session stops) sends no answer: following cancels the question and the call.
    if (!request.signal?.aborted && !followed.call.answer(elicitResultOf(request.inputResponses)))
      this.hooks.log(followed, `the server gave up its question during the call of ${followed.name} before it was answered; the call's own outcome follows.`);
    return this.follow(followed, request);
  }

  /** Answers every question held `cancel` and stops its call: the host closes. */
  cancelAll(): void {
    for (const key of [...this.held.keys()]) this.take(key)?.call.cancel();
  }

  private hold(key: string, followed: FollowedCall): void {
    // One question per key: a caller that names two calls alike keeps the later one.
    const before = this.take(key);
    if (before && before.call !== followed.call) before.call.cancel();
    // A lost connection takes its questions along: their answers find none held.
    const lost = followed.call.connection.lostSignal;
    if (lost.aborted) return;
    const drop = () => this.take(key);
    lost.addEventListener('abort', drop, { once: true });
    this.held.set(key, { ...followed, forget: () => lost.removeEventListener('abort', drop) });
    // Bounded like everything a server can make the host keep: past the limit the oldest
    // question is cancelled (its call is abandoned; the answer, if it comes, finds none held).
    if (this.held.size > this.hooks.limit) {
      const [oldest] = this.held.keys();
      const dropped = oldest === undefined ? undefined : this.take(oldest);
      if (dropped) {
        this.hooks.log(
          dropped,
          `more than ${this.hooks.limit} questions wait for people (limits.heldQuestions): the oldest, of ${dropped.name}, was cancelled.`,
        );
        dropped.call.cancel();
      }
    }
  }

  private take(key: string): FollowedCall | undefined {
    const held = this.held.get(key);
    if (!held) return undefined;
    this.held.delete(key);
    held.forget();
    return held;
  }
}

/** A person's answer as the SDK sends it back; anything that is not an elicitation's answer is `cancel`. */
function elicitResultOf(responses: InputResponses | undefined): ElicitResult {
  const answer = responses?.[LIVE_REQUEST_KEY] as { action?: unknown; content?: unknown } | undefined;
  const action = answer?.action;
  if (action !== 'accept' && action !== 'decline' && action !== 'cancel') return { action: 'cancel' };
  const content = answer?.content;
  return action === 'accept' && typeof content === 'object' && content !== null ? { action, content: content as ElicitResult['content'] } : { action };
}
