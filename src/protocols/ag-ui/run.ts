/**
 * One AG-UI run on a thread (= a Steward session): decide from the `RunAgentInput` what the
 * session is sent — the first request, or the user event a resume stands for — refuse what
 * the interrupt contract forbids (RUN_ERROR, nothing sent), drive the session until it waits
 * or is done, and close the run with the snapshots and the outcome.
 */
import { EventType, PROTOCOL_VERSION, type BaseEvent, type Interrupt, type RunAgentInput } from '@ag-ui/core';
import type { SessionContext } from '../../core/machines/session.context.js';
import type { DecisionChannel, UserEvent } from '../../core/machines/session.events.js';
import { storedState } from '../../runtime/persisted.js';
import type { Runtime } from '../../runtime/runtime.js';
import type { SessionView } from '../../core/view.js';
import type { SessionStore, StoredSession } from '../../store/session-store.js';
import type { AccessAction } from '../../http/access.js';
import { sessionIdProblem, SESSION_ID_RULE } from '../../ids.js';
import type { SessionHost } from '../../serve/session-host.js';
import { clientError } from '../../http/errors.js';
import { RunTranslator, messagesOf, pendingRunWorkerCall, type Emit } from './events.js';
import { isToolWait } from '../../core/tools/server-tools.js';
import { answerOf, eventForAnswer, interruptsFor } from './interrupts.js';
import { interruptWait, otherItemNamed, withInterruptTarget } from './interrupt-ids.js';
import { waitItems } from './team-interrupts.js';
import { closedWaitAnswer, waitsForFirstRequest } from './waits.js';
import { readJournal } from '../../runtime/journal-waits.js';
import { sendWhenFree, untilNotRunning } from '../settle.js';

export interface AgUiDeps {
  runtime: Runtime;
  store: SessionStore;
  host: SessionHost;
  /** Spends one of the caller's session creations, or throws (the create limit): called once a new thread's first message passed its checks. */
  admitCreate?: () => void;
  /** Aborted when the client leaves: a run waiting for a thread another run drives stops waiting. */
  signal?: AbortSignal;
  /**
   * Throws unless the caller may `action` the thread (SessionAccess.require): a 404 as for an
   * unknown session when they may not see it, a 403 when they may see but not decide it.
   * None: anyone may.
   */
  access?: (id: string, action: AccessAction, stored: StoredSession) => Promise<unknown>;
  /** Whose a thread this run creates is (ownerOf the caller); none: no one's. */
  owner?: string | null;
}

/** A refusal of the run: RUN_ERROR with a code and a message that names the fix. */
class RunRefused extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

interface Thread {
  view: SessionView;
  context: SessionContext;
  /** The open interrupts (the session waits: one, or one per item of a fan-out), else none. */
  interrupts: Interrupt[];
  /** Whether the session still waits for its first request (a new thread): a user message is that request. */
  firstRequest: boolean;
}

async function readThread(deps: AgUiDeps, id: string): Promise<Thread> {
  const stored = await deps.store.load(id);
  if (!stored) throw new RunRefused('thread_not_found', `No session "${id}".`);
  const { snapshot, view } = storedState(deps.runtime.machine, stored);
  const interrupts = view.phase === 'waiting_user' ? interruptsFor(view, pendingRunWorkerCall(snapshot.context)) : [];
  return { view, context: snapshot.context, interrupts, firstRequest: waitsForFirstRequest(view, snapshot.context) };
}

/** How long a run waits for a thread another run drives to wait or end, at most (then RUN_ERROR thread_running). */
const SETTLE_LIMIT_MS = 10 * 60_000;

/**
 * The thread once it waits or is done. This run's own send is over, but another run's send
 * may drive the thread now: the run then waits for that wait (or the end) while it lives, so
 * that it never reports success for a thread that is still running.
 */
async function settledThread(deps: AgUiDeps, id: string): Promise<Thread> {
  const thread = await untilNotRunning(deps.host, id, () => readThread(deps, id), SETTLE_LIMIT_MS, deps.signal);
  if (thread.view.phase === 'running')
    throw new RunRefused(
      'thread_running',
      (await deps.host.runsNow(id))
        ? `Thread ${id} is still running (another run drives it): send a run without new input later to see its interrupt.`
        : `Thread ${id} was saved mid-run and nothing runs it now (its process stopped): resume it (steward resume ${id}, or a send on a server that takes it over), then send this again.`,
    );
  return thread;
}

/**
 * The text of the input's newest user message that the thread does not hold yet (the ids of
 * its messages are ours: MESSAGES_SNAPSHOT gives them to the client), if there is one.
 */
function newUserText(input: RunAgentInput, thread: Thread | null): string | undefined {
  const known = new Set(thread ? messagesOf(thread.context, thread.view.waitingReason).map((m) => m.id) : []);
  const last = input.messages.findLast((m) => m.role === 'user' && !known.has(m.id));
  if (!last) return undefined;
  const content = last.content as unknown;
  if (typeof content === 'string') return content.trim();
  if (Array.isArray(content))
    return content
      .flatMap((p: { type?: string; text?: string }) => (p.type === 'text' && typeof p.text === 'string' ? [p.text] : []))
      .join('\n')
      .trim();
  return '';
}

/**
 * One user event to send, and the result it gives the tool call its interrupt concerns (an
 * approved or rejected run_worker). `item`: the answer to one item of a fan-out, as the journal
 * compares it (another run may decide the item first).
 */
type Send = { event: UserEvent; answers?: { toolCallId: string; content: string }; item?: { interruptId: string; payload: unknown } };
type Decision = { kind: 'send'; sends: Send[] } | { kind: 'report' };

/**
 * What this run sends the session, or that it only reports where the thread is (a resume
 * already answered, a cancelled one). A resume may answer several open interrupts (a fan-out's
 * items): each resolved one is a send of its own, in the order given; a cancelled one stays open.
 */
async function decide(deps: AgUiDeps, thread: Thread, input: RunAgentInput): Promise<Decision> {
  const resume = input.resume ?? [];
  const [open] = thread.interrupts;
  if (thread.view.phase === 'running')
    throw new RunRefused('thread_running', `Thread ${thread.view.id} is running (another run drives it): wait until that run ends, then send this again.`);
  if (resume.length === 0) {
    const text = newUserText(input, thread);
    // Nothing new (a reloaded page, say): the run reports where the thread is, its open interrupts included.
    if (text === undefined) return { kind: 'report' };
    if (thread.view.phase === 'done') throw new RunRefused('thread_done', `Thread ${thread.view.id} is done: start a new thread for a new request.`);
    if (open && !thread.firstRequest)
      throw new RunRefused(
        'interrupt_pending',
        `Thread ${thread.view.id} has an open interrupt (${open.id}, ${open.reason}): send a run whose resume answers it ` +
          `({ interruptId: "${open.id}", status: "resolved", payload }) before any new input.`,
      );
    if (!open || text === '') return { kind: 'report' };
    return { kind: 'send', sends: [{ event: { type: 'user_submitted_input', text, wait: thread.view.wait! } }] };
  }
  const ids = resume.map((r) => r.interruptId);
  const twice = ids.find((id, i) => ids.indexOf(id) !== i);
  if (twice !== undefined) throw new RunRefused('invalid_resume_payload', `The resume answers interrupt ${twice} twice: answer each interrupt once.`);
  const isOpen = (id: string) => thread.interrupts.some((i) => i.id === id);
  // A resume naming an interrupt that is not open is harmless only if the journal holds the same answer for it.
  const others = resume.filter((r) => !isOpen(r.interruptId));
  // Read once for all of them, and only when some resume names an interrupt that is not open.
  const entries = others.length > 0 ? await readJournal(deps.store, thread.view.id) : [];
  for (const other of others) {
    const wait = interruptWait(thread.view.id, other.interruptId);
    const payload = withInterruptTarget(thread.view.id, other.interruptId, other.payload);
    const answered = wait === null || other.status !== 'resolved' ? 'unanswered' : closedWaitAnswer(entries, wait, payload);
    if (answered !== 'same')
      throw new RunRefused(
        'interrupt_stale',
        `Interrupt ${other.interruptId} is not open on thread ${thread.view.id}` +
          (answered === 'other' ? ' (it was answered differently)' : '') +
          (open ? `: answer ${openOnes(thread.interrupts)}.` : thread.view.phase === 'done' ? ': the thread is done.' : '.'),
      );
  }
  // Every other entry repeats an answer the journal holds (the same resume again, harmless); a cancelled one sends nothing.
  const answered = resume.filter((r) => isOpen(r.interruptId) && r.status === 'resolved');
  if (answered.length === 0) return { kind: 'report' };
  const sends = answered.map((entry): Send => {
    const interrupt = thread.interrupts.find((i) => i.id === entry.interruptId)!;
    // An answer without its item or call is for the one its interrupt names; one naming another item is for no interrupt here.
    const crossed = otherItemNamed(thread.view.id, entry.interruptId, entry.payload);
    if (crossed) throw new RunRefused('invalid_resume_payload', crossed);
    const payload = withInterruptTarget(thread.view.id, entry.interruptId, entry.payload);
    const answer = eventForAnswer(thread.view, payload);
    if (!answer.ok) throw new RunRefused('invalid_resume_payload', answers(answered.length, entry.interruptId, answer.message));
    // An MCP call's decision gets no echo as its result: what the call did is (events.ts sends it).
    const toolCallId = isToolWait(thread.view.waitingReason) ? undefined : interrupt.toolCallId;
    return {
      // The answer names the wait it was made for: if another run answered it first, the chart refuses it.
      event: { ...answer.event, wait: thread.view.wait! },
      ...(toolCallId ? { answers: { toolCallId, content: JSON.stringify({ decision: answer.event.type, ...answerOfEvent(answer.event) }) } } : {}),
      ...(waitItems(thread.view).length > 0 ? { item: { interruptId: entry.interruptId, payload } } : {}),
    };
  });
  return { kind: 'send', sends };
}

/**
 * Whether an item's answer the session refused repeats the decision another run made on it
 * first: the item no longer waits, and every decision the journal holds on it says the same.
 */
async function itemDecidedAlike(deps: AgUiDeps, id: string, wait: number, item: { interruptId: string; payload: unknown }): Promise<boolean> {
  const now = await readThread(deps, id);
  if (now.interrupts.some((i) => i.id === item.interruptId)) return false;
  return closedWaitAnswer(await readJournal(deps.store, id), wait, item.payload) === 'same';
}

/** The open interrupts, as a refusal names them. */
const openOnes = (interrupts: readonly Interrupt[]) =>
  interrupts.length > 1 ? `the open ones, ${interrupts.map((i) => i.id).join(', ')}` : `the open one, ${interrupts[0]!.id}`;

/** A problem with one answer of a resume, naming the interrupt when the resume answers several. */
const answers = (count: number, interruptId: string, message: string) => (count > 1 ? `Interrupt ${interruptId}: ${message}` : message);

/** A refusal of the `i`th send of a run, saying which when the run sends several (those before it were applied). */
const answersTo = (count: number, i: number, message: string) =>
  count > 1 ? `Answer ${i + 1} of ${count} was refused (those before it were applied): ${message}` : message;

const answerOfEvent = (event: UserEvent) => answerOf(event as unknown as Record<string, unknown>) as Record<string, unknown>;

/**
 * Runs one AG-UI run and emits its events (each checked by `@ag-ui/core`'s schema by `emit`).
 * `who`: the authenticated caller's attribution (`by`, `via`, the `groups` it decides as), never the payload's, and the surface (`through`).
 *
 * @example
 * await runAgUi(deps, 'short-story', input, { by: 'ana' }, (event) => sse.writeSSE({ data: JSON.stringify(event) }));
 */
export async function runAgUi(
  deps: AgUiDeps,
  packageId: string,
  input: RunAgentInput,
  who: { by?: string; via?: string; groups?: string[]; through?: DecisionChannel },
  emit: Emit,
): Promise<void> {
  const { threadId, runId } = input;
  const started = { type: EventType.RUN_STARTED, threadId, runId, protocolVersion: PROTOCOL_VERSION } as BaseEvent;
  try {
    const problem = sessionIdProblem(threadId);
    if (problem) throw new RunRefused('invalid_thread_id', `The threadId is the session id: ${problem}, but ${SESSION_ID_RULE}.`);
    const stored = await deps.store.load(threadId);
    if (!stored) {
      // A new thread: its first message is checked before the session is stored, so a refused run leaves nothing behind.
      if ((input.resume?.length ?? 0) > 0)
        throw new RunRefused('interrupt_stale', `Thread ${threadId} is new: it has no interrupt to resume. Send a user message to start it.`);
      const text = newUserText(input, null);
      await deps.host.create({
        packageId,
        id: threadId,
        ...(text ? { first: { type: 'user_submitted_input', text, ...who } } : {}),
        ...(deps.admitCreate ? { admit: deps.admitCreate } : {}),
        ...(deps.owner !== undefined ? { owner: deps.owner } : {}),
      });
    } else {
      // Someone else's thread is no thread to this caller: the refusal of an unknown session, before anything of it shows.
      await deps.access?.(threadId, 'read', stored);
      if (stored.packageId !== packageId)
        throw new RunRefused('thread_package_mismatch', `Thread ${threadId} works with package "${stored.packageId}": post it to /ag-ui/${stored.packageId}.`);
    }
    // A resume names its interrupt: while another run drives the thread, wait for where it leads, then decide.
    const thread = (input.resume?.length ?? 0) > 0 ? await settledThread(deps, threadId) : await readThread(deps, threadId);
    const decision = await decide(deps, thread, input);
    // What is sent decides (an answer to an interrupt, a new request): the caller must be one who may.
    if (decision.kind === 'send' && stored) await deps.access?.(threadId, 'decide', stored);
    emit(started);
    let source = { context: () => thread.context, view: () => thread.view };
    const translator = new RunTranslator(
      emit,
      () => source.context(),
      () => source.view(),
      runId,
    );
    translator.snapshot();
    const sends = decision.kind === 'send' ? decision.sends : [];
    for (const [i, { event, answers, item }] of sends.entries()) {
      // The answered tool call's result goes out once the session took the answer (its next round, or the run's end).
      if (answers)
        translator.hold({
          type: EventType.TOOL_CALL_RESULT,
          messageId: i === 0 ? `${runId}:answer` : `${runId}:answer:${i + 1}`,
          toolCallId: answers.toolCallId,
          role: 'tool',
          content: answers.content,
        } as BaseEvent);
      const send = () =>
        deps.host.send(threadId, { ...event, ...who }, (session) => {
          source = { context: () => session.actorRef.getSnapshot().context, view: () => session.view() };
          return session.subscribe((e) => translator.on(e), { textDeltas: true });
        });
      // Another server runs the thread (another run's answer, say): once it waits again, the same
      // decision is sent again. It names its wait, so the session applies it there or nowhere.
      const result = await sendWhenFree(send, () => settledThread(deps, threadId));
      // A decision for a wait another run answered first: the same answer is a harmless repeat
      // (the run reports where the thread is); another answer is stale, as when the race is lost early.
      // The answers of a resume sent before this one stay applied: the error names the one refused.
      // Another run decided this item first (both read it open): the same answer is a harmless repeat, as for a whole wait.
      if (!result.ok && result.error.code === 'event_refused' && item && (await itemDecidedAlike(deps, threadId, event.wait!, item))) continue;
      if (!result.ok)
        throw new RunRefused(result.error.code === 'wait_closed' ? 'interrupt_stale' : result.error.code, answersTo(sends.length, i, result.error.message));
    }
    const after = await settledThread(deps, threadId);
    source = { context: () => after.context, view: () => after.view };
    const interrupts = after.interrupts;
    translator.finish(interrupts);
    emit({
      type: EventType.RUN_FINISHED,
      threadId,
      runId,
      outcome: interrupts.length > 0 ? { type: 'interrupt', interrupts } : { type: 'success' },
      ...(after.view.phase === 'done' ? { result: { state: after.view.state, ...(after.view.message ? { summary: after.view.message } : {}) } } : {}),
    } as BaseEvent);
  } catch (error) {
    // Before RUN_STARTED the protocol allows RUN_ERROR alone; after it, RUN_ERROR ends the run.
    // As every route tells it: a store fault's file or database stays in the server's log.
    const { code, message } = clientError(error, (details) => deps.host.log(`serve: an AG-UI run on thread ${threadId} failed: ${details}`));
    emit({ type: EventType.RUN_ERROR, code, message } as BaseEvent);
  }
}
