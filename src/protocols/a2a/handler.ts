/**
 * The A2A request handler of one package's agent: the SDK's `A2ARequestHandler` interface
 * implemented over Steward's sessions, so the session store is the only state (no SDK task
 * store: `tasks/get` after a restart reads the session). A message starts a session (its
 * `contextId`, or a new id) or answers the wait of the task it names; the answer is checked
 * with the wait's schema (`src/protocols/ag-ui/interrupts.ts`, the same as AG-UI's
 * interrupts) before anything is sent, and `by` is the authenticated caller's.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ExtendedAgentCardNotConfiguredError,
  PushNotificationNotSupportedError,
  RequestMalformedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from '@a2a-js/sdk/errors';
import { TaskStatus, type AgentCard, type SendMessageRequest, type StreamResponse, type Task } from '@a2a-js/sdk';
import type { A2ARequestHandler } from '@a2a-js/sdk/server';
import { randomUUID } from 'node:crypto';
import { sessionIdProblem, SESSION_ID_RULE } from '../../ids.js';
import type { DecisionChannel, UserEvent } from '../../core/machines/session.events.js';
import type { SessionStreamEvent } from '../../core/machines/stream-events.js';
import type { Runtime } from '../../runtime/runtime.js';
import type { SessionHost } from '../../serve/session-host.js';
import type { SessionStore, StoredSession } from '../../store/session-store.js';
import type { AccessAction } from '../../http/access.js';
import { HttpError } from '../../http/errors.js';
import { stepName } from '../ag-ui/events.js';
import { artifactsOf, partsOf, readA2AThread, statusOf, stream, taskOf, type A2AThread } from './tasks.js';
import { eventOf, FIRST_REQUEST_TEXT, messageKey, payloadOf, waitNamedBy, withNamedCall } from './message-answers.js';
import { closedWaitAnswer } from '../ag-ui/waits.js';
import { readJournal } from '../../runtime/journal-waits.js';
import { sendWhenFree, untilNotRunning } from '../settle.js';

export interface A2ADeps {
  runtime: Runtime;
  store: SessionStore;
  host: SessionHost;
  /** Spends one of the caller's session creations, or throws (the create limit, src/serve/create-limit.ts); none: not limited. */
  admitCreate?: () => void;
  /**
   * Throws unless the caller may `action` the session (SessionAccess.require): a 404 when they
   * may not see it (answered as an unknown task), a 403 when they may see but not decide it.
   * None: anyone may.
   */
  access?: (id: string, action: AccessAction, stored?: StoredSession) => Promise<unknown>;
  /** Whose a context this caller starts is (ownerOf the caller); none: no one's. */
  owner?: string | null;
}

type Who = { by?: string; via?: string; groups?: string[]; through?: DecisionChannel };

/** How long an answer that met another server running the session waits for that run to end, at most. */
const SETTLE_LIMIT_MS = 10 * 60_000;

/** Re-reads after a live wait or end, until the store shows it (the event can come before the write). */
const SETTLE_TRIES = 100;
const SETTLE_STEP_MS = 20;

/** One queue of stream responses, filled by listeners and drained by the stream's generator. */
class Feed {
  private items: StreamResponse[] = [];
  private wake: (() => void) | null = null;
  private closed = false;
  push(item: StreamResponse): void {
    this.items.push(item);
    this.wake?.();
  }
  close(): void {
    this.closed = true;
    this.wake?.();
  }
  async *drain(): AsyncGenerator<StreamResponse> {
    for (;;) {
      const next = this.items.shift();
      if (next) {
        yield next;
        continue;
      }
      if (this.closed) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = null;
    }
  }
}

/** The working note of a model round, as a status message says it. */
const roundNote = (event: SessionStreamEvent): string | null => (event.type === 'round_started' ? stepName(event) : null);

/**
 * Steward's A2A agent for one package, for one caller.
 *
 * @example
 * const handler = new StewardA2AHandler(deps, 'short-story', card, { by: 'ana' }, request.signal);
 * const rpc = new JsonRpcTransportHandler(handler);
 */
export class StewardA2AHandler implements A2ARequestHandler {
  constructor(
    private readonly deps: A2ADeps,
    private readonly packageId: string,
    private readonly card: AgentCard,
    private readonly who: Who,
    /** Aborted when the client leaves or the server shuts down: the streams end (a session under way still runs to its wait). */
    private readonly signal?: AbortSignal,
  ) {}

  getAgentCard(): Promise<AgentCard> {
    return Promise.resolve(this.card);
  }

  getAuthenticatedExtendedAgentCard(): Promise<AgentCard> {
    return Promise.reject(new ExtendedAgentCardNotConfiguredError({ message: 'This agent has no extended card: its public card says all it does.' }));
  }

  /** Sends the message's event and answers the task once the session waits again or is done. */
  async sendMessage(params: SendMessageRequest): Promise<Task> {
    const { id, event, key } = await this.prepare(params);
    if (event) await this.send(id, event, key);
    return taskOf(await this.read(id));
  }

  /** The task (working), a working status per model round, the newly accepted artifacts, then the status it stops at. */
  async *sendMessageStream(params: SendMessageRequest): AsyncGenerator<StreamResponse, void, undefined> {
    const { id, event, thread, key } = await this.prepare(params);
    if (!event) {
      yield stream.task(taskOf(thread));
      return;
    }
    const feed = this.feed();
    const before = new Set(artifactsOf(thread.context).map((a) => a.artifactId));
    const working = taskOf(thread);
    working.status = TaskStatus.fromJSON({ state: 'TASK_STATE_WORKING', timestamp: new Date().toISOString() });
    feed.push(stream.task(working));
    const sending = (async () => {
      try {
        await this.send(id, event, key, (e) => {
          const note = roundNote(e);
          if (note) feed.push(stream.working(id, note));
        });
        const after = await this.read(id);
        for (const artifact of artifactsOf(after.context)) if (!before.has(artifact.artifactId)) feed.push(stream.artifact(id, artifact));
        feed.push(stream.status(id, statusOf(after)));
      } finally {
        feed.close();
      }
    })();
    sending.catch(() => {}); // rethrown below, after what was fed
    yield* feed.drain();
    if (!this.signal?.aborted) await sending;
  }

  async getTask(params: { id: string }): Promise<Task> {
    await this.visible(params.id);
    return taskOf(await this.read(params.id));
  }

  cancelTask(params: { id: string }): Promise<Task> {
    return Promise.reject(
      new TaskNotCancelableError({
        message:
          `Task ${params.id} cannot be canceled: a Steward session has no abandon event. Answer its wait instead ` +
          '(reject the step or the artifact, with a reason), or leave it waiting: a waiting session costs nothing.',
      }),
    );
  }

  /** The task now, then (while it runs) its live working notes until it waits or is done, then that status. */
  async *resubscribe(params: { id: string }): AsyncGenerator<StreamResponse, void, undefined> {
    const id = params.id;
    await this.visible(id);
    const feed = this.feed();
    let settled = false;
    // Listening first, then reading: a wait that comes between the two is not missed.
    // Only what the listener hears: the replay of earlier rounds would repeat notes a client had or does not need
    // (a run under way on another server may still come again, sent for a new watcher: a note or two twice at most).
    // It reads no deltas, so it does not follow the session (its model calls need not stream for it).
    const { stop } = await this.deps.host.watchLive(
      id,
      ({ event: e }) => {
        const note = roundNote(e);
        if (note) feed.push(stream.working(id, note));
        if ((e.type === 'waiting' || e.type === 'done' || e.type === 'stopped') && !settled) {
          settled = true;
          void this.settle(id).then(
            (thread) => {
              feed.push(stream.status(id, statusOf(thread)));
              feed.close();
            },
            () => feed.close(),
          );
        }
      },
      { follow: false },
    );
    try {
      const thread = await this.read(id);
      if (thread.view.phase === 'done')
        throw new UnsupportedOperationError({ message: `Task ${id} is completed: there is nothing to follow. Get it with GetTask (tasks/get).` });
      yield stream.task(taskOf(thread));
      if (thread.view.phase !== 'running') return;
      yield* feed.drain();
    } finally {
      stop();
    }
  }

  listTasks(): Promise<never> {
    return Promise.reject(new UnsupportedOperationError({ message: 'ListTasks is not offered: list sessions with GET /sessions.' }));
  }

  createTaskPushNotificationConfig(): Promise<never> {
    return Promise.reject(new PushNotificationNotSupportedError({ message: 'No push notifications: follow a task with SubscribeToTask (tasks/resubscribe).' }));
  }
  getTaskPushNotificationConfig(): Promise<never> {
    return this.createTaskPushNotificationConfig();
  }
  listTaskPushNotificationConfigs(): Promise<never> {
    return this.createTaskPushNotificationConfig();
  }
  deleteTaskPushNotificationConfig(): Promise<never> {
    return this.createTaskPushNotificationConfig();
  }

  /** A feed that ends when the request is aborted. */
  private feed(): Feed {
    const feed = new Feed();
    this.signal?.addEventListener('abort', () => feed.close(), { once: true });
    return feed;
  }

  private async read(id: string): Promise<A2AThread> {
    const problem = sessionIdProblem(id);
    if (problem) throw new RequestMalformedError({ message: `A task id is a session id: ${problem}, but ${SESSION_ID_RULE}.` });
    const thread = await readA2AThread(this.deps, id);
    if (!thread || thread.packageId !== this.packageId) throw this.notFound(id);
    return thread;
  }

  private notFound(id: string): TaskNotFoundError {
    return new TaskNotFoundError({ message: `No task ${id} on the agent ${this.packageId}.` });
  }

  /** Throws unless the caller may see task `id`: another caller's task is no task to them (the error of an unknown one). */
  private async visible(id: string): Promise<void> {
    const problem = sessionIdProblem(id);
    if (problem) throw new RequestMalformedError({ message: `A task id is a session id: ${problem}, but ${SESSION_ID_RULE}.` });
    await this.allowed(id, 'read', undefined, () => this.notFound(id));
  }

  /** Throws unless the caller may `action` the session: `notFound()` when they may not see it, as for an unknown task. */
  private async allowed(id: string, action: AccessAction, stored: StoredSession | undefined, notFound: () => Error): Promise<void> {
    try {
      await this.deps.access?.(id, action, stored);
    } catch (error) {
      if (HttpError.isInstance(error) && error.status === 404) throw notFound();
      throw error;
    }
  }

  /** The session as the store has it once a live wait or end reached it. */
  private async settle(id: string): Promise<A2AThread> {
    let thread = await this.read(id);
    for (let i = 0; i < SETTLE_TRIES && thread.view.phase === 'running'; i++) {
      await sleep(SETTLE_STEP_MS);
      thread = await this.read(id);
    }
    return thread;
  }

  /**
   * The session the message is for (created when new) and the user event it stands for, or null
   * for a repeat of the answer a closed wait got (nothing to send); refused before anything is sent.
   */
  private async prepare(params: SendMessageRequest): Promise<{ id: string; event: UserEvent | null; thread: A2AThread; key: string | undefined }> {
    const message = params.message;
    if (!message) throw new RequestMalformedError({ message: 'SendMessage needs a message.' });
    if (message.taskId && message.contextId && message.taskId !== message.contextId)
      throw new RequestMalformedError({ message: `A task's contextId is its id (the session id): send taskId "${message.taskId}" alone, or both equal.` });
    const id = message.taskId || message.contextId || randomUUID();
    const problem = sessionIdProblem(id);
    if (problem) throw new RequestMalformedError({ message: `The contextId is the session id: ${problem}, but ${SESSION_ID_RULE}.` });
    let stored = await this.deps.store.load(id);
    const unknown = () => new TaskNotFoundError({ message: `No task ${id}: leave taskId out (and set contextId, or not) to start one.` });
    if (!stored && message.taskId) throw unknown();
    // Another caller's context is no context to this one: refused as an unknown task, before anything of it shows.
    if (stored) await this.allowed(id, 'read', stored, () => (message.taskId ? unknown() : this.notFound(id)));
    if (!stored) {
      // Checked before the session exists (its text, the text's size, the create limit): a refused first message leaves nothing behind.
      const text = partsOf(message).text;
      if (!text) throw new RequestMalformedError({ message: FIRST_REQUEST_TEXT });
      const first = { type: 'user_submitted_input', text, ...this.who };
      await this.deps.host.create({
        packageId: this.packageId,
        id,
        first,
        ...(this.deps.admitCreate ? { admit: this.deps.admitCreate } : {}),
        ...(this.deps.owner !== undefined ? { owner: this.deps.owner } : {}),
      });
      stored = await this.deps.store.load(id);
    } else {
      // A message to a task that is there answers it (or repeats an answer): it decides.
      await this.allowed(id, 'decide', stored, unknown);
    }
    if (stored?.packageId !== this.packageId)
      throw new RequestMalformedError({ message: `Context ${id} works with package "${stored?.packageId}": send it to /a2a/${stored?.packageId}.` });
    let thread = await this.read(id);
    const key = messageKey(message);
    const named = thread.firstRequest ? undefined : waitNamedBy(message, id);
    if (named === undefined) return { id, event: eventOf(thread, message), thread, key };
    // The message names the wait it answers: while the task works, see where it leads first; a wait
    // closed by then takes no answer (a repeat of the one it got is harmless, and nothing is sent).
    if (thread.view.phase === 'running') thread = await untilNotRunning(this.deps.host, id, () => this.read(id), SETTLE_LIMIT_MS, this.signal);
    // Still working (nothing moved it in time, or nothing runs it): eventOf says so.
    if (named === thread.view.wait || thread.view.phase === 'running') return { id, event: { ...eventOf(thread, message), wait: named }, thread, key };
    const closed = closedWaitAnswer(await readJournal(this.deps.store, id), named, withNamedCall(payloadOf(message), message, id));
    if (closed === 'same') return { id, event: null, thread, key };
    const now = thread.interrupt ? `its open wait is ${thread.interrupt.id}` : `it is ${thread.view.phase === 'done' ? 'completed' : thread.view.state}`;
    const what =
      closed === 'other' ? 'is no longer open (it was answered differently)' : named > (thread.view.wait ?? 0) ? 'has not opened' : 'is no longer open';
    throw new UnsupportedOperationError({
      message: `Wait ${named} of task ${id} ${what}: ${now}. Nothing was sent; read the task and answer its open wait.`,
      metadata: { code: 'wait_closed' },
    });
  }

  /** Sends through the host; a refusal by the session (a guard, another server running it) is an error, nothing changed. */
  private async send(id: string, event: UserEvent, key: string | undefined, listen?: (event: SessionStreamEvent) => void): Promise<void> {
    const send = () =>
      this.deps.host.send(
        id,
        { ...event, ...this.who },
        listen ? (session) => session.subscribe(listen, { textDeltas: false }) : undefined,
        key ? { idempotencyKey: key } : {},
      );
    let result;
    try {
      // Another server runs the session (another answer, say): once it waits again, the answer is
      // sent again. It names its wait, so the session applies it there or nowhere.
      result = await sendWhenFree(send, () => untilNotRunning(this.deps.host, id, () => this.read(id), SETTLE_LIMIT_MS, this.signal));
    } catch (error) {
      if (HttpError.isInstance(error)) throw new UnsupportedOperationError({ message: error.message, metadata: { code: error.code } });
      throw error;
    }
    if (!result.ok) throw new UnsupportedOperationError({ message: result.error.message, metadata: { code: result.error.code } });
  }
}
