/**
 * One `tools/call` from its start to its end, across the questions its server asks on the live
 * connection (a revision before 2026-07-28 sends `elicitation/create` while the call waits).
 * Such a question is held: the caller is told (`next()` gives it), the SDK's request and the
 * server's question stay open, and the call's time limit stands still until a person's answer
 * goes back (`answer()`), perhaps from a later `callTool` of the same host. Only this process
 * can answer: the question lives on this connection, nowhere else.
 */
import type { ElicitRequestParams, ElicitResult } from '@modelcontextprotocol/client';
import { callOnConnection, type Outcome, type StopReason } from './call-tool.js';
import type { CallTakingQuestions, Connection } from './connection.js';
import { PausableTimer } from './pausable-timer.js';
import type { ListedTool } from './tool-definitions.js';
import type { CallToolRequest } from './types.js';

/** What a caller following the call learns next: the server asks a person, or the call ended. */
export type CallStep = { kind: 'asked'; params: ElicitRequestParams } | { kind: 'ended'; outcome: Outcome };

/** A question the server waits on, and how its answer goes back. */
interface HeldQuestion {
  params: ElicitRequestParams;
  reply: (result: ElicitResult) => void;
  /** A caller was given it (a question asked while nobody followed waits for the next one). */
  told: boolean;
}

export class CallUnderWay implements CallTakingQuestions {
  /** What the call came to; never rejects. */
  readonly ended: Promise<Outcome>;
  private readonly controller = new AbortController();
  private stoppedBecause: StopReason | null = null;
  private readonly timer: PausableTimer;
  private question: HeldQuestion | null = null;
  private outcome: Outcome | null = null;
  /** The caller following the call now, if any. */
  private follower: ((step: CallStep) => void) | null = null;
  private readonly holdsQuestions: boolean;

  /**
   * Starts the call. `holdsQuestions`: the caller can name the call again (a `heldKey`), so a
   * question is held for it; otherwise a question is declined.
   */
  constructor(
    readonly connection: Connection,
    listed: ListedTool,
    request: CallToolRequest,
    options: { timeoutMs: number; resultChars: number; holdsQuestions: boolean },
  ) {
    this.holdsQuestions = options.holdsQuestions;
    this.timer = new PausableTimer(options.timeoutMs, () => this.stop('timeout'));
    const notUnderWay = connection.underWay(this);
    this.ended = callOnConnection(connection, listed, request, {
      signal: this.controller.signal,
      stoppedBecause: () => this.stoppedBecause,
      timeoutMs: options.timeoutMs,
      resultChars: options.resultChars,
    }).then((outcome) => {
      notUnderWay();
      this.timer.clear();
      this.outcome = outcome;
      // A question still open dies with its call (the SDK has nobody to send the answer to).
      this.question?.reply({ action: 'cancel' });
      this.question = null;
      this.tell({ kind: 'ended', outcome });
      return outcome;
    });
  }

  /** The next step: a question the server asks (held until `answer()`), or the call's end. `signal` cancels the call. */
  next(signal?: AbortSignal): Promise<CallStep> {
    if (signal?.aborted) this.cancel();
    if (this.outcome) return Promise.resolve({ kind: 'ended', outcome: this.outcome });
    if (this.question && !this.question.told) {
      this.question.told = true;
      return Promise.resolve({ kind: 'asked', params: this.question.params });
    }
    return new Promise<CallStep>((resolve) => {
      const onAbort = () => this.cancel();
      this.follower = (step) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(step);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** A person's answer to the question held: the server goes on, and so does the time limit. False: no question waits (the server gave it up). */
  answer(result: ElicitResult): boolean {
    const question = this.question;
    if (!question) return false;
    this.question = null;
    this.timer.resume();
    question.reply(result);
    return true;
  }

  /** Stops the call: a question held is answered `cancel`, and the request is abandoned. */
  cancel(): void {
    this.question?.reply({ action: 'cancel' });
    this.question = null;
    this.stop('cancelled');
  }

  ask(params: ElicitRequestParams, withdrawn: AbortSignal): Promise<ElicitResult> | { refused: string } {
    if (!this.holdsQuestions) return { refused: 'its caller cannot be asked later (no heldKey)' };
    if (this.question) return { refused: 'its call already waits on another question' };
    if (this.stoppedBecause !== null || this.outcome) return { refused: 'its call is being stopped' };
    return new Promise<ElicitResult>((resolve) => {
      const question: HeldQuestion = { params, reply: resolve, told: false };
      this.question = question;
      // A person's time is not the server's: the limit stands still until the answer goes back.
      this.timer.pause();
      withdrawn.addEventListener(
        'abort',
        () => {
          if (this.question !== question) return;
          this.question = null;
          this.timer.resume();
          resolve({ action: 'cancel' });
        },
        { once: true },
      );
      if (this.follower) {
        question.told = true;
        this.tell({ kind: 'asked', params });
      }
    });
  }

  private tell(step: CallStep): void {
    const follower = this.follower;
    this.follower = null;
    follower?.(step);
  }

  private stop(reason: StopReason): void {
    if (this.stoppedBecause !== null || this.outcome) return;
    this.stoppedBecause = reason;
    this.timer.clear();
    this.controller.abort(reason);
  }
}
