/**
 * What Steward's MCP tools do, over the sessions of serve's SessionHost: a call starts a
 * session (or comes back to one) and runs it to its next wait; a wait is answered through the
 * protocol — an `input_required` result whose forms are the wait's interrupts (forms.ts) and
 * whose request state names the session and the wait (request-state.ts, signed) — until the
 * session is done, when the result holds its accepted artifacts. The SDK's legacy shim serves
 * the same handler to a host on the 2025 protocol: it asks the forms as `elicitation/create`
 * requests on the open connection and calls the handler again with the answers.
 *
 * The answers name the wait they are for: applied there or not at all. A session answered
 * elsewhere meanwhile (its page, a decision link, a retry of this same call that got through
 * first) has moved on, and the call goes on from where it is: a retried answer counts once.
 * A host that declines or cancels a form leaves the session waiting, and the result says so.
 */
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CallToolResult, InputRequiredResult } from '@modelcontextprotocol/server';
import { inputRequired } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { canonicalJson } from '../../core/text/canonical-json.js';
import type { DecisionChannel, UserEvent } from '../../core/machines/session.events.js';
import type { SessionStreamEvent } from '../../core/machines/stream-events.js';
import { acceptedArtifacts, type SessionView } from '../../core/view.js';
import type { SessionContext } from '../../core/machines/session.context.js';
import type { AccessAction } from '../../http/access.js';
import { HttpError } from '../../http/errors.js';
import { storedState } from '../../runtime/persisted.js';
import type { Runtime } from '../../runtime/runtime.js';
import type { SessionHost } from '../../serve/session-host.js';
import type { SessionPage, SessionStore, StoredSession } from '../../store/session-store.js';
import { sessionIdProblem, SESSION_ID_RULE } from '../../ids.js';
import { eventForAnswer } from '../ag-ui/interrupts.js';
import { stepName } from '../ag-ui/events.js';
import { sendWhenFree, untilNotRunning } from '../settle.js';
import { FormResponse, formsFor, toolInputAnswer, type WaitForm } from './forms.js';
import type { RequestState, RequestStates } from './request-state.js';

export interface McpTeamDeps {
  runtime: Runtime;
  store: SessionStore;
  host: SessionHost;
  /** Signs and checks the request states. */
  states: RequestStates;
  /** The caller's sessions, a page at a time (SessionAccess.list; the CLI: every session). */
  list: (page: { limit: number; after: string | null }) => Promise<SessionPage>;
  /** Spends one of the caller's session creations, or throws (the create limit); none: not limited. */
  admitCreate?: () => void;
  /** Throws unless the caller may `action` the session (a 404 when they may not see it); none: anyone may. */
  access?: (id: string, action: AccessAction, stored?: StoredSession) => Promise<unknown>;
  /** Whose a session this caller starts is; none: no one's. */
  owner?: string | null;
  /** Where a failure of the server's own is told (its details never reach the host). */
  log: (message: string) => void;
}

/** Who calls: the name a request state is bound to, and what the events they send record. */
export interface McpCaller {
  name?: string;
  who: { by?: string; via?: string; groups?: string[]; through: DecisionChannel };
}

/** What a call says while the agents work: a model round, an artifact published. */
export type Progress = (message: string) => void;

/** The structured content of every result: where the session stands. */
export const SessionOutcome = z.object({
  sessionId: z.string(),
  status: z.enum(['waiting', 'running', 'done']),
  wait: z.number().int().optional(),
  waitingReason: z.string().optional(),
  summary: z.string().optional(),
  artifacts: z.array(z.object({ id: z.string(), workerId: z.string(), tags: z.record(z.string(), z.string()) })).optional(),
});
type SessionOutcome = z.infer<typeof SessionOutcome>;

type CallResult = CallToolResult | InputRequiredResult;

/** How long a call waits for a session another request drives before it answers "running". */
const SETTLE_LIMIT_MS = 10 * 60_000;
/** How often a call looks again for a takeover of a session whose runner died. */
const TAKEOVER_POLL_MS = 250;

/** A failure the host reads as the tool's result (isError), with what to do. */
export class McpCallRefused extends Error {}

interface Read {
  view: SessionView;
  context: SessionContext;
  packageId: string | null;
}

/**
 * The tools' work for one caller.
 *
 * @example
 * const calls = new McpTeamCalls(deps, { name: 'ana', who: { by: 'ana', through: 'mcp' } });
 * await calls.start('short-story', 'A story about a lighthouse.'); // input_required with the first wait's form
 */
export class McpTeamCalls {
  constructor(
    private readonly deps: McpTeamDeps,
    private readonly caller: McpCaller,
    private readonly signal?: AbortSignal,
  ) {}

  /** A new session of `packageId` for `request`, run to its first wait. */
  async start(packageId: string, request: string, tags: Record<string, string> | undefined, progress?: Progress): Promise<CallResult> {
    const first: UserEvent = { type: 'user_submitted_input', text: request };
    const { view } = await this.deps.host.create({
      packageId,
      first: { ...first, ...this.caller.who },
      ...(tags ? { blackboard: tags } : {}),
      ...(this.deps.admitCreate ? { admit: this.deps.admitCreate } : {}),
      ...(this.deps.owner !== undefined ? { owner: this.deps.owner } : {}),
    });
    const sent = await this.send(view.id, { ...first, wait: view.wait! }, undefined, progress);
    if (!sent.ok) throw new McpCallRefused(sent.message);
    return this.reply(await this.read(view.id));
  }

  /** Where session `id` stands: its wait's forms, or its result; a session that runs is followed until it stops. */
  async continue(id: string): Promise<CallResult> {
    await this.allowed(checkedId(id), 'read');
    return this.reply(await this.settled(id));
  }

  /**
   * The host's answers to the forms of `state`'s wait: sent, then the session runs to its next
   * wait. A session that moved on meanwhile goes on from where it is, nothing sent.
   */
  async answer(state: RequestState, responses: Record<string, unknown> | undefined, progress?: Progress, packageId?: string): Promise<CallResult> {
    const id = state.sessionId;
    await this.allowed(id, 'decide');
    const read = await this.settled(id);
    const { view } = read;
    if (packageId !== undefined && read.packageId !== packageId)
      throw new McpCallRefused(`The request state is for a session of package "${read.packageId}": call run_${read.packageId} or continue_session with it.`);
    if (view.phase !== 'waiting_user' || view.wait !== state.wait) return this.reply(read);
    const forms = formsFor(view);
    const given = new Map<string, FormResponse>();
    for (const form of forms) {
      const raw = responses && Object.hasOwn(responses, form.interruptId) ? responses[form.interruptId] : undefined;
      const parsed = FormResponse.safeParse(raw);
      if (parsed.success) given.set(form.interruptId, parsed.data);
    }
    // Nothing answered (a host that called again without its answers): the same forms again.
    if (given.size === 0) return this.reply(read);
    const answers = this.eventsOf(view, forms, given);
    if ('left' in answers) return this.leftWaiting(view, answers.left);
    if ('problem' in answers) return this.reply(read, answers.problem);
    for (const event of answers.events) {
      const sent = await this.send(id, { ...event, wait: state.wait }, keyOf(state, event, this.caller.who), progress);
      if (sent.ok) continue;
      // Refused: while its wait is still open, the person is asked again, with why; once it closed
      // (answered elsewhere meanwhile, an item decided by someone else), the call goes on from there.
      const now = await this.settled(id);
      const open = now.view.phase === 'waiting_user' && now.view.wait === state.wait;
      return this.reply(now, open ? sent.message : undefined);
    }
    return this.reply(await this.settled(id));
  }

  /** The caller's sessions, newest first, a page at a time. */
  async list(after: string | null): Promise<CallToolResult> {
    const page = await this.deps.list({ limit: 50, after });
    const lines = page.sessions.map((s) => `${s.id} · ${s.packageId ?? 'no package'} · ${s.state ?? ''} · ${s.updatedAt}`);
    return {
      content: [{ type: 'text', text: lines.length ? lines.join('\n') : 'No sessions.' }],
      structuredContent: { sessions: page.sessions.map((s) => ({ ...s })), next: page.next },
    };
  }

  /** One session as it stands: its view and its blackboard's tags with their bodies. */
  async read(id: string): Promise<Read> {
    const stored = await this.deps.store.load(checkedId(id));
    if (!stored) throw new McpCallRefused(`No session ${id}. List yours with list_sessions.`);
    await this.allowed(id, 'read', stored);
    const { snapshot, view } = storedState(this.deps.runtime.machine, stored);
    return { view, context: snapshot.context, packageId: stored.packageId };
  }

  /**
   * The session once no other request drives it (or the limit passed: then still running). On a
   * server that takes sessions over, a session whose runner died (its lease ran out, no one
   * claimed it yet) is given two leases' time for a takeover scan to claim it: a host that sends
   * its call again after its server died gets where the session went, not "running".
   */
  private async settled(id: string): Promise<Read> {
    const settle = () => untilNotRunning(this.deps.host, id, () => this.read(id), SETTLE_LIMIT_MS, this.signal);
    let read = await settle();
    const until = Date.now() + 2 * this.deps.host.leaseMs;
    while (read.view.phase === 'running' && this.deps.host.takesOver && Date.now() < until && !this.signal?.aborted) {
      await sleep(TAKEOVER_POLL_MS);
      read = await settle();
    }
    return read;
  }

  /** The events the accepted forms stand for, checked by the wait's schema; or the forms declined; or why an answer is not one. */
  private eventsOf(view: SessionView, forms: WaitForm[], given: Map<string, FormResponse>): { events: UserEvent[] } | { left: string[] } | { problem: string } {
    // A tool's server asked: every response goes to it, a decline too (the server hears it).
    if (view.waitingReason === 'tool_input') {
      const answer = toolInputAnswer(view, given);
      if (!answer.ok) return { problem: `Answer every form of the call's server (missing: ${answer.missing.join(', ')}).` };
      const event = eventForAnswer(view, answer.payload);
      return event.ok ? { events: [event.event] } : { problem: event.message };
    }
    const left = [...given].filter(([, r]) => r.action !== 'accept').map(([key, r]) => `${key} (${r.action === 'decline' ? 'declined' : 'cancelled'})`);
    if (left.length) return { left };
    const events: UserEvent[] = [];
    for (const form of forms) {
      const response = given.get(form.interruptId);
      if (!response) continue;
      const answer = form.answerOf(response.content ?? {});
      if (!answer.ok) return { problem: answer.message };
      const event = eventForAnswer(view, answer.payload);
      if (!event.ok) return { problem: event.message.replace("the interrupt's responseSchema", 'the form') };
      events.push(event.event);
    }
    return { events };
  }

  /** Sends one event through the host (once another server's run of the session is over); what the session said. */
  private async send(
    id: string,
    event: UserEvent,
    key: string | undefined,
    progress?: Progress,
  ): Promise<{ ok: true } | { ok: false; code: string; message: string }> {
    const observe = progress
      ? (session: { subscribe: (l: (e: SessionStreamEvent) => void, o: { textDeltas: boolean }) => () => void }) =>
          session.subscribe(
            (e) => {
              const note = progressNote(e);
              if (note) progress(note);
            },
            { textDeltas: false },
          )
      : undefined;
    const send = () => this.deps.host.send(id, { ...event, ...this.caller.who }, observe, key ? { idempotencyKey: key } : {});
    try {
      const result = await sendWhenFree(send, () => this.settled(id));
      return result.ok ? { ok: true } : { ok: false, code: result.error.code, message: result.error.message };
    } catch (error) {
      if (HttpError.isInstance(error)) return { ok: false, code: error.code, message: error.message };
      throw error;
    }
  }

  /**
   * The call's result for the session as it stands: its wait's forms, its artifacts once done, or
   * that it still runs — and whether anything runs it (saved mid-run by a process that stopped: nothing will move it).
   */
  private async reply(read: Read, problem?: string): Promise<CallResult> {
    const { view } = read;
    if (view.phase === 'waiting_user') {
      const forms = formsFor(view);
      const requests = Object.fromEntries(
        forms.map((f) => [f.interruptId, problem ? withNotice(f.request, `Your answer was not taken: ${problem}`) : f.request]),
      );
      return inputRequired({
        inputRequests: requests,
        requestState: this.deps.states.sign({ sessionId: view.id, wait: view.wait!, ...(this.caller.name !== undefined ? { caller: this.caller.name } : {}) }),
      });
    }
    if (view.phase === 'done') return doneResult(read);
    const outcome: SessionOutcome = { sessionId: view.id, status: 'running' };
    const text = !(await this.deps.host.runsNow(view.id))
      ? `Session ${view.id} was left running (${view.state}) by a process that stopped, and nothing runs it now: ` +
        `\`steward resume ${view.id}\` continues it (a server on PostgreSQL takes it over by itself), then call continue_session with its id.`
      : `Session ${view.id} is still running (${view.state}). Call continue_session with its id to follow it.`;
    return { content: [{ type: 'text', text }], structuredContent: outcome };
  }

  /** The result of a call whose forms the host declined or cancelled: the session waits, and how to come back. */
  private leftWaiting(view: SessionView, left: string[]): CallToolResult {
    const outcome: SessionOutcome = { sessionId: view.id, status: 'waiting', wait: view.wait!, waitingReason: view.waitingReason! };
    return {
      content: [
        {
          type: 'text',
          text:
            `Nothing was sent: ${left.join(', ')}. Session ${view.id} still waits (${view.waitingReason}, wait ${view.wait}). ` +
            'Call continue_session with its id to answer it later, or answer it on any other surface (the page, a decision link).',
        },
      ],
      structuredContent: outcome,
    };
  }

  private async allowed(id: string, action: AccessAction, stored?: StoredSession): Promise<void> {
    try {
      await this.deps.access?.(id, action, stored);
    } catch (error) {
      if (HttpError.isInstance(error) && error.status === 404) throw new McpCallRefused(`No session ${id}. List yours with list_sessions.`);
      if (HttpError.isInstance(error)) throw new McpCallRefused(error.message);
      throw error;
    }
  }
}

function checkedId(id: string): string {
  const problem = sessionIdProblem(id);
  if (problem) throw new McpCallRefused(`${problem}, but ${SESSION_ID_RULE}.`);
  return id;
}

/** A form asked again with why the last answer was not taken, above its message. */
function withNotice<T extends { params?: unknown }>(request: T, notice: string): T {
  const params = request.params as { message?: string } | undefined;
  return { ...request, params: { ...params, message: `${notice}\n\n${params?.message ?? ''}` } };
}

/**
 * The idempotency key of one answer: the state it answers, who answers and what they say, so a
 * host that sends the same answers again (a retry after a timeout) decides once, and two
 * deciders who say the same never share a key.
 */
function keyOf(state: RequestState, event: UserEvent, who: McpCaller['who']): string {
  const said = { s: state.sessionId, w: state.wait, by: who.by ?? null, via: who.via ?? null, event };
  return `mcp:${createHash('sha256').update(canonicalJson(said)).digest('base64url')}`;
}

/** The working note of a live event a host sees as progress, if it is one. */
function progressNote(event: SessionStreamEvent): string | null {
  if (event.type === 'round_started') return stepName(event);
  if (event.type === 'artifact_published') return `artifact ${event.artifactId} by ${event.workerId}: ${Object.keys(event.tags).join(', ')}`;
  if (event.type === 'tool_call_started') return `tool ${event.server}.${event.tool}`;
  return null;
}

/** The result of a session that is done: its summary and its accepted artifacts (text, and by tag in the structured content). */
function doneResult({ view, context }: Read): CallToolResult {
  const artifacts = acceptedArtifacts(context).map((a) => ({ id: a.id, workerId: a.workerId, tags: Object.fromEntries(a.tags.map((t) => [t.tag, t.body])) }));
  const outcome: SessionOutcome = { sessionId: view.id, status: 'done', ...(view.message ? { summary: view.message } : {}), artifacts };
  return {
    content: [
      { type: 'text', text: view.message ?? `Session ${view.id} is done.` },
      ...artifacts.flatMap((a) => Object.entries(a.tags).map(([tag, body]) => ({ type: 'text' as const, text: `[${tag}] ${body}` }))),
    ],
    structuredContent: outcome,
  };
}
