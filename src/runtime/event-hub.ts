/**
 * Derives a session's live events from what its actor already reports — XState's inspection
 * stream — so the machine's guards and actions stay pure and know nothing of listeners:
 * - each microstep: the snapshot before and after it (the tool call at the head of the reply
 *   queue checked, accepted or refused by the rule named in the transition's params;
 *   artifacts published; a notice; a refused user event; the state entered; a turn done);
 * - each macrostep's end: a turn actor started (a model round), the session waits or ended;
 * - text deltas: from the model call, through the sink the turns look up (agents/text-deltas).
 *
 * The hub listens to the actor only while it has listeners: with none, it holds nothing and
 * the session pays nothing. A listener is called synchronously, in order; one that throws
 * does not disturb the session (its error is rethrown asynchronously, as XState does).
 */
import type { Actor, AnyActorRef, AnyMachineSnapshot, AnyTransitionDefinition, InspectionEvent, Subscription } from 'xstate';
import { setTextDeltaSink } from '../agents/text-deltas.js';
import { snapshotState, stateString } from '../machines/refusals.js';
import type { SessionContext } from '../machines/session.context.js';
import { firstNumber, type Transcript } from '../machines/transcript.js';
import type { SessionMachine } from '../machines/session.machine.js';
import type { ChatMessage, TokenUsage } from '../models/model.js';
import {
  MAX_TOOL_NAME,
  type SessionEventListener,
  type SessionStreamEvent,
  type StreamEventOf,
  type SubscribeOptions,
} from './session-events.js';
import type { WaitingReason } from './view.js';

type Agent = 'manager' | 'worker';
type RoundInfo = Pick<StreamEventOf<'round_started'>, 'agent' | 'workerId' | 'burst' | 'maxBurst' | 'round'>;
/** Events as the hub builds them; `emit` adds sessionId and at. */
type Draft = SessionStreamEvent extends infer E ? (E extends SessionStreamEvent ? Omit<E, 'sessionId' | 'at'> : never) : never;

/** The invoke ids of the machine's model turns. */
const TURN_AGENTS: Record<string, Agent> = { managerTurn: 'manager', workerTurn: 'worker' };
const TURN_EVENT = /^xstate\.(done|error)\.actor\.(managerTurn|workerTurn)$/;

interface Entry {
  listener: SessionEventListener;
  textDeltas: boolean;
}

interface OpenRound {
  ref: AnyActorRef;
  info: RoundInfo;
  startedAt: number;
}

export class SessionEventHub {
  private readonly entries = new Set<Entry>();
  private deltaListeners = 0;
  private inspection: Subscription | null = null;
  private failure: Subscription | null = null;
  /** The snapshot before the next microstep (the last one seen). */
  private last: AnyMachineSnapshot | null = null;
  private round: OpenRound | null = null;
  private ended = false;

  constructor(
    private readonly sessionId: string,
    private readonly actor: () => Actor<SessionMachine>,
  ) {}

  /** Listeners and open streams. */
  get listenerCount(): number {
    return this.entries.size;
  }

  get isOver(): boolean {
    return this.actor().getSnapshot().status !== 'active';
  }

  subscribe(listener: SessionEventListener, options: SubscribeOptions = {}): () => void {
    if (typeof listener !== 'function') throw new TypeError('session.subscribe(listener) needs a function, e.g. (event) => console.log(event.type).');
    const entry: Entry = { listener, textDeltas: options.textDeltas !== false };
    this.entries.add(entry);
    if (entry.textDeltas) this.deltaListeners++;
    this.attachOrDetach();
    return () => {
      if (!this.entries.delete(entry)) return;
      if (entry.textDeltas) this.deltaListeners--;
      this.attachOrDetach();
    };
  }

  private attachOrDetach(): void {
    const actor = this.actor();
    if (this.entries.size > 0 && !this.inspection && !this.isOver) {
      this.last = actor.getSnapshot();
      this.ended = false;
      this.round = null;
      this.openRound(this.last);
      this.inspection = actor.system.inspect((e) => this.onInspect(e));
      // A machine that throws fails its actor without a final inspection snapshot.
      this.failure = actor.subscribe({ error: (error) => this.end('failed', error) });
    } else if (this.entries.size === 0 && this.inspection) {
      this.inspection.unsubscribe();
      this.failure?.unsubscribe();
      this.inspection = this.failure = null;
      this.last = this.round = null;
    }
    setTextDeltaSink(actor.system, this.inspection && this.deltaListeners > 0 ? this.onDelta : undefined);
  }

  private readonly onDelta = (text: string): void => {
    if (!this.inspection || typeof text !== 'string' || text === '') return;
    // A model may write before the macrostep that started it ends: announce its round first.
    const round = this.round ?? this.openRound(this.actor().getSnapshot());
    if (round) this.emit({ type: 'text_delta', ...round.info, text });
  };

  private onInspect(e: InspectionEvent): void {
    if (e.actorRef !== this.actor()) return;
    if (e.type === '@xstate.microstep') this.onMicrostep(e.event, e.snapshot as AnyMachineSnapshot, e._transitions);
    else if (e.type === '@xstate.snapshot') this.onMacrostepEnd(e.snapshot as AnyMachineSnapshot);
  }

  private onMicrostep(event: { type: string }, after: AnyMachineSnapshot, transitions: AnyTransitionDefinition[]): void {
    const before = this.last ?? after;
    this.last = after;
    // XState hands a turn's done/error event to every microstep of its macrostep: the first
    // one closes the round (finishRound clears it), the others find no round open.
    const turn = TURN_EVENT.exec(event.type);
    if (turn) this.finishRound(turn[1] === 'done' ? 'replied' : 'failed', event, before, after);
    else if (event.type === 'xstate.stop') this.finishRound('stopped', event, before, after);
    const was = before.context as SessionContext;
    const now = after.context as SessionContext;
    this.checkedCalls(before, now, transitions);
    if (now.artifacts !== was.artifacts) {
      const known = new Set(was.artifacts.map((a) => a.id));
      for (const a of now.artifacts) {
        if (!known.has(a.id)) this.emit({ type: 'artifact_published', artifactId: a.id, workerId: a.workerId, tags: { ...a.tags }, revises: a.revises ?? null });
      }
    }
    if (now.notice && now.notice !== was.notice) this.emit({ type: 'notice', text: now.notice });
    if (now.rejections !== was.rejections) {
      const latest = now.rejections[now.rejections.length - 1];
      if (latest && latest !== was.rejections[was.rejections.length - 1]) this.emit({ type: 'user_event_refused', eventType: latest.type, reason: latest.reason });
    }
    const state = snapshotState(after);
    if (state !== snapshotState(before) && after.status !== 'stopped') this.emit({ type: 'state_entered', state });
  }

  private onMacrostepEnd(snapshot: AnyMachineSnapshot): void {
    this.last = snapshot;
    if (snapshot.status === 'done') return this.end('done');
    if (snapshot.status === 'stopped') return this.end('stopped');
    if (snapshot.status === 'error') return this.end('failed', snapshot.error);
    if (this.round === null) this.openRound(snapshot);
    if (snapshot.matches('waiting_user')) {
      const state = stateString(snapshot.value);
      this.emit({ type: 'waiting', reason: state.split('.')[1] as WaitingReason, state });
    }
  }

  /** Announces the model round whose turn actor is running in `snapshot`, if it is new. */
  private openRound(snapshot: AnyMachineSnapshot): OpenRound | null {
    for (const [id, ref] of Object.entries(snapshot.children as Record<string, AnyActorRef | undefined>)) {
      const agent = TURN_AGENTS[id];
      if (!agent || !ref || ref === this.round?.ref) continue;
      const context = snapshot.context as SessionContext;
      const info: RoundInfo = {
        agent,
        workerId: agent === 'worker' ? (context.step?.workerId ?? null) : null,
        burst: Math.min(context.burst + 1, context.maxBurst),
        maxBurst: context.maxBurst,
        round: context.rounds + 1,
      };
      this.round = { ref, info, startedAt: Date.now() };
      // At subscribe time (not inspecting yet) the round was already under way: no start to report.
      if (this.inspection) this.emit({ type: 'round_started', ...info });
      return this.round;
    }
    return null;
  }

  private finishRound(outcome: 'replied' | 'failed' | 'stopped', event: { type: string }, before: AnyMachineSnapshot, after: AnyMachineSnapshot): void {
    const round = this.round;
    this.round = null;
    if (!round) return;
    const context = after.context as SessionContext;
    // The reply's calls: the assistant message its accept appended (its first call may be
    // settled on the same edge already, so the queue no longer holds all of them).
    const agent = round.info.agent;
    const reply = outcome === 'replied' ? appended((before.context as SessionContext).transcripts[agent], context.transcripts[agent]).find((m) => m.role === 'assistant') : undefined;
    const usage = outcome === 'replied' ? usageOf((event as { output?: { usage?: unknown } }).output?.usage) : null;
    const error = outcome === 'failed' ? errorText((event as { error?: unknown }).error) : undefined;
    this.emit({
      type: 'round_finished',
      ...round.info,
      outcome,
      durationMs: Math.max(0, Date.now() - round.startedAt),
      usage,
      totalUsage: { ...context.ledger.usage },
      toolCalls: reply?.role === 'assistant' ? (reply.tool_calls ?? []).map((c) => clip(String(c.function.name))) : [],
      ...(error !== undefined ? { error } : {}),
    });
  }

  /**
   * The calls checked in this microstep, accepted or refused: each gets its tool result on the
   * edge that checks it (a turn's onDone checks the first call, `checking` each other one).
   */
  private checkedCalls(before: AnyMachineSnapshot, now: SessionContext, transitions: AnyTransitionDefinition[]): void {
    const state = stateString(before.value);
    if (!state.startsWith('running.')) return;
    const was = before.context as SessionContext;
    const agent: Agent = state.startsWith('running.worker') ? 'worker' : 'manager';
    const added = appended(was.transcripts[agent], now.transcripts[agent]);
    for (const result of added) {
      if (result.role !== 'tool') continue;
      const call = callOf(now.transcripts[agent].messages, result.tool_call_id);
      const rule = ruleOf(transitions);
      const base = {
        type: 'tool_call_checked' as const,
        agent,
        workerId: agent === 'worker' ? (was.step?.workerId ?? null) : null,
        callId: result.tool_call_id,
        tool: clip(String(call?.function.name ?? '')),
      };
      if (rule === undefined) this.emit({ ...base, accepted: true });
      else this.emit({ ...base, accepted: false, rule, message: result.content.replace(/^Error: /, '') });
    }
  }

  private end(reason: 'done' | 'stopped' | 'failed', error?: unknown): void {
    if (this.ended) return;
    this.ended = true;
    if (reason === 'done') {
      const context = this.last?.context as SessionContext | undefined;
      this.emit({ type: 'done', summary: context?.message ?? null });
    } else {
      this.emit({ type: 'stopped', reason, ...(reason === 'failed' ? { error: errorText(error) } : {}) });
    }
  }

  private emit(draft: Draft): void {
    const event = { ...draft, sessionId: this.sessionId, at: Date.now() } as SessionStreamEvent;
    for (const entry of [...this.entries]) {
      if (event.type === 'text_delta' && !entry.textDeltas) continue;
      try {
        entry.listener(event);
      } catch (error) {
        setTimeout(() => {
          throw error;
        });
      }
    }
  }
}

/** The rule a refusing transition names in its action's params (`refuseCall` with `{ rule }`). */
function ruleOf(transitions: AnyTransitionDefinition[]): string | undefined {
  for (const t of transitions) {
    for (const action of t.actions ?? []) {
      const rule = (action as { params?: { rule?: unknown } } | null)?.params?.rule;
      if (typeof rule === 'string') return rule;
    }
  }
  return undefined;
}

/** The messages `now` holds that `before` did not (by number: a window is only appended to, or reset). */
function appended(before: Transcript, now: Transcript): ChatMessage[] {
  if (now === before) return [];
  const first = firstNumber(now);
  return now.messages.slice(Math.max(before.total, first) - first);
}

/** The tool call with this id, from the latest assistant message that made it. */
function callOf(messages: ChatMessage[], callId: string) {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === 'assistant') {
      const call = m.tool_calls?.find((c) => c.id === callId);
      if (call) return call;
    }
  }
  return undefined;
}

function usageOf(value: unknown): TokenUsage | null {
  const u = value as Partial<TokenUsage> | null | undefined;
  const ok = (n: unknown): n is number => typeof n === 'number' && Number.isInteger(n) && n >= 0;
  return u && ok(u.promptTokens) && ok(u.completionTokens) ? { promptTokens: u.promptTokens, completionTokens: u.completionTokens } : null;
}

function clip(name: string): string {
  return name.length > MAX_TOOL_NAME ? `${name.slice(0, MAX_TOOL_NAME - 1)}…` : name;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
