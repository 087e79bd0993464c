/**
 * Forwards a session's live events to its listeners. The chart emits them where the facts
 * happen (session.reports.ts, XState's `emit`); the hub subscribes with `actor.on('*')` and
 * adds only what the chart cannot know: `sessionId`, `at` (the clock) and a round's
 * `durationMs`. Two events are the actor's own, not the chart's: the end of a stopped or
 * failed actor (`stopped`, and `round_finished` for a model call it cut short), and what a
 * model streams: its text (`text_delta`) and its tool calls (`tool_call_delta`, and for a
 * worker's `submit` the draft's `artifact_delta`s, closed by `artifact_published` or
 * `artifact_draft_discarded`: runtime/artifact-draft.ts), which reach the hub through
 * `deltaSinks` (the runtime hands them to the model call of this session's turns, asked once
 * per call, for the agent that makes it). The workers of a fan-out run at once: each agent's
 * round, draft and deltas are kept apart, by agent (`manager`, or the worker's id).
 *
 * The hub listens to the actor only while it has listeners: with none, it holds nothing and
 * the session pays nothing. A listener is called synchronously, in order; one that throws
 * does not disturb the session (its error is rethrown asynchronously, as XState does).
 */
import type { Actor, Subscription } from 'xstate';
import { versionOf } from '../core/blackboard/blackboard.js';
import type { DeltaSinks, ToolCallDelta } from '../core/models/model.js';
import type { SessionMachine } from '../core/machines/session.machine.js';
import { clipName, roundOf, type ChartEvent, type RoundInfo } from '../core/machines/session.reports.js';
import type { SessionStreamEvent, SessionStreamEventType, StreamEventOf } from '../core/machines/stream-events.js';
import { ArtifactDraft } from './artifact-draft.js';
import { branchContext, branchesIn } from '../core/machines/team.js';
import type { SessionEventListener, SubscribeOptions } from './session-events.js';

/** An event as the hub forwards it, before `sessionId` and `at`. */
type Draft = SessionStreamEvent extends infer E ? (E extends SessionStreamEvent ? Omit<E, 'sessionId' | 'at'> : never) : never;

/** The events of a reply as it is written: only listeners that want deltas get them. */
const DELTA_TYPES: ReadonlySet<SessionStreamEventType> = new Set(['text_delta', 'tool_call_delta', 'artifact_delta', 'artifact_draft_discarded']);

interface Entry {
  listener: SessionEventListener;
  textDeltas: NonNullable<SubscribeOptions['textDeltas']>;
}

/** The model round under way: what the chart announced, and when the hub saw it start. */
interface OpenRound {
  info: RoundInfo;
  startedAt: number;
}

/** Who makes a model call: the manager, or a worker (several run at once in a fan-out). */
export type RoundAgent = Pick<RoundInfo, 'agent' | 'workerId'>;

/** The key an agent's round, draft and deltas are kept under. */
const keyOf = ({ agent, workerId }: RoundAgent): string => (agent === 'manager' ? 'manager' : `worker:${workerId ?? ''}`);

export class SessionEventHub {
  private readonly entries = new Set<Entry>();
  private subscriptions: Subscription[] | null = null;
  /** The rounds under way, by agent. */
  private readonly rounds = new Map<string, OpenRound>();
  /** Each worker's draft of its last round, until the chart publishes or refuses it. */
  private readonly drafts = new Map<string, ArtifactDraft>();
  /** Each worker's round that replied last, whose artifact the chart may publish next. */
  private readonly repliedRounds = new Map<string, RoundInfo>();
  /** The agent whose round replied last: its reply's calls are checked next. */
  private replied: string | null = null;
  private ended = false;
  /** Events held back until a write settles (holdUntil): delivered once it is made, dropped if it is refused. */
  private held: SessionStreamEvent[] | null = null;

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

  /**
   * Where a model call of this session starting now streams its text and tool calls (`agent`:
   * who makes it; without it, the round under way that started last); undefined while no
   * listener wants deltas.
   */
  deltaSinks(agent?: RoundAgent): DeltaSinks | undefined {
    if (!this.wantsDeltas()) return undefined;
    const key = agent ? keyOf(agent) : undefined;
    return { onTextDelta: (text) => this.onDelta(key, text), onToolCallDelta: (delta) => this.onToolCallDelta(key, delta) };
  }

  /** Whether any listener takes deltas at all (always, or when its function says so). */
  private mayWantDeltas(): boolean {
    for (const entry of this.entries) if (entry.textDeltas !== false) return true;
    return false;
  }

  /** Whether a listener wants the deltas of a model call starting now (a function is asked: SubscribeOptions). */
  private wantsDeltas(): boolean {
    if (!this.subscriptions) return false;
    for (const entry of this.entries) {
      if (entry.textDeltas === true) return true;
      if (entry.textDeltas === false) continue;
      try {
        if (entry.textDeltas()) return true;
      } catch (error) {
        // A listener's own error does not disturb the session (as in emit below): no deltas for it.
        rethrowLater(error);
      }
    }
    return false;
  }

  subscribe(listener: SessionEventListener, options: SubscribeOptions = {}): () => void {
    if (typeof listener !== 'function') throw new TypeError('session.subscribe(listener) needs a function, e.g. (event) => console.log(event.type).');
    const asked = options.textDeltas;
    const entry: Entry = { listener, textDeltas: typeof asked === 'function' ? asked : asked !== false };
    this.entries.add(entry);
    this.attachOrDetach();
    return () => {
      if (!this.entries.delete(entry)) return;
      this.attachOrDetach();
    };
  }

  private attachOrDetach(): void {
    const actor = this.actor();
    if (this.entries.size > 0 && !this.subscriptions && !this.isOver) {
      this.ended = false;
      for (const round of this.roundsUnderWay()) this.rounds.set(keyOf(round.info), round);
      this.subscriptions = [
        actor.on('*', (event) => this.onChartEvent(event)),
        // Without an error observer XState would rethrow the actor's error (a crash).
        actor.subscribe({ complete: () => this.end(), error: (error) => this.end(error) }),
      ];
    } else if (this.entries.size === 0 && this.subscriptions) {
      for (const s of this.subscriptions) s.unsubscribe();
      this.subscriptions = null;
      this.rounds.clear();
      this.drafts.clear();
    }
  }

  /** At subscribe time model calls may be under way already (a fan-out's, several): their rounds, with no start to report. */
  private roundsUnderWay(): OpenRound[] {
    const snapshot = this.actor().getSnapshot();
    const startedAt = Date.now();
    for (const agent of ['manager', 'worker'] as const) {
      if (snapshot.matches({ running: { [agent]: 'thinking' } })) return [{ info: roundOf(snapshot.context, agent), startedAt }];
    }
    return branchesIn(snapshot.context, 'running').map((b) => ({
      info: { ...roundOf(branchContext(snapshot.context, b), 'worker'), ...(b.round ? { round: b.round } : {}) },
      startedAt,
    }));
  }

  /** The round a delta belongs to: its agent's (none given: the one that started last). */
  private roundOf(key: string | undefined): OpenRound | undefined {
    if (key !== undefined) return this.rounds.get(key) ?? this.roundsUnderWay().find((r) => keyOf(r.info) === key);
    return [...this.rounds.values()].at(-1) ?? this.roundsUnderWay().at(-1);
  }

  private onDelta(key: string | undefined, text: string): void {
    if (!this.subscriptions || typeof text !== 'string' || text === '') return;
    const round = this.roundOf(key);
    if (round) this.emit({ type: 'text_delta', ...round.info, text });
  }

  private onToolCallDelta(key: string | undefined, delta: ToolCallDelta): void {
    if (!this.subscriptions || !Number.isInteger(delta?.index) || typeof delta.arguments !== 'string') return;
    const round = this.roundOf(key);
    if (!round) return;
    const { info } = round;
    this.emit({
      type: 'tool_call_delta',
      round: info.round,
      agent: info.agent === 'manager' ? 'manager' : (info.workerId ?? 'worker'),
      callIndex: delta.index,
      ...(typeof delta.id === 'string' ? { callId: delta.id } : {}),
      ...(typeof delta.name === 'string' ? { name: clipName(delta.name) } : {}),
      argumentsDelta: delta.arguments,
    });
    if (info.agent === 'worker') this.draftOf(info).toolCallDelta(delta);
  }

  private draftOf(info: RoundInfo): ArtifactDraft {
    const key = keyOf(info);
    let draft = this.drafts.get(key);
    if (draft?.round !== info.round) this.drafts.set(key, (draft = new ArtifactDraft(info.round, info.workerId ?? 'worker', (event) => this.emit(event))));
    return draft;
  }

  /** An artifact was published: its draft sends what the stream did not bring, before the chart's event. */
  private publishDraft(event: Pick<StreamEventOf<'artifact_published'>, 'tags' | 'workerId'>): void {
    const key = keyOf({ agent: 'worker', workerId: event.workerId });
    const info = this.repliedRounds.get(key);
    this.repliedRounds.delete(key);
    if (!info || !this.mayWantDeltas()) return;
    const board = this.actor().getSnapshot().context.blackboard;
    const bodies = new Map<string, string>();
    for (const [tag, version] of Object.entries(event.tags)) {
      const body = versionOf(board, tag, version)?.body;
      if (typeof body === 'string') bodies.set(tag, body);
    }
    this.draftOf(info).published(bodies);
    this.drafts.delete(key);
  }

  private onChartEvent(event: ChartEvent): void {
    if (event.type === 'round_started') {
      const key = keyOf(event);
      this.drafts.delete(key);
      this.repliedRounds.delete(key);
      this.rounds.set(key, {
        info: { agent: event.agent, workerId: event.workerId, burst: event.burst, maxBurst: event.maxBurst, round: event.round },
        startedAt: Date.now(),
      });
      this.emit(event);
    } else if (event.type === 'round_finished') {
      const key = keyOf(event);
      const info = this.rounds.get(key)?.info;
      if (event.agent === 'worker' && info) this.repliedRounds.set(key, info);
      this.replied = key;
      this.emit({ ...event, durationMs: this.finishRound(key) });
      if (event.outcome !== 'replied') this.drafts.get(key)?.ended(event.outcome);
    } else if (event.type === 'tool_call_checked' && event.agent === 'worker' && !event.accepted) {
      this.emit(event);
      this.drafts.get(this.replied ?? keyOf(event))?.refused(event.callId, event.tool, event.rule);
    } else if (event.type === 'artifact_published') {
      this.publishDraft(event);
      this.emit(event);
    } else {
      this.emit(event);
    }
  }

  /** Closes an agent's open round: how long it ran (from subscribe(), for one under way then). */
  private finishRound(key: string): number {
    const startedAt = this.rounds.get(key)?.startedAt ?? Date.now();
    this.rounds.delete(key);
    return Math.max(0, Date.now() - startedAt);
  }

  /** The actor ended: done (the chart said so), stopped (stop(), close(), a failed write) or failed. */
  private end(error?: unknown): void {
    if (this.ended) return;
    this.ended = true;
    const snapshot = this.actor().getSnapshot();
    if (error === undefined && snapshot.status === 'done') return;
    if (error === undefined) {
      const totalUsage = { ...snapshot.context.ledger.usage };
      for (const [key, round] of [...this.rounds]) {
        this.emit({ type: 'round_finished', ...round.info, outcome: 'stopped', durationMs: this.finishRound(key), usage: null, totalUsage, toolCalls: [] });
        this.drafts.get(key)?.ended('stopped');
      }
    }
    if (error === undefined) this.emit({ type: 'stopped', reason: 'stopped' });
    else this.emit({ type: 'stopped', reason: 'failed', error: error instanceof Error ? error.message : String(error) });
  }

  /**
   * Holds the events back from now until `written` settles: delivered in order if the write was
   * made, dropped if it was refused (what the session did then never happened in the store).
   */
  holdUntil(written: Promise<boolean>): void {
    if (this.held) return;
    const held: SessionStreamEvent[] = [];
    this.held = held;
    void written.then((made) => {
      if (this.held === held) this.held = null;
      if (made) for (const event of held) this.deliver(event);
    });
  }

  private emit(draft: ChartEvent | Draft): void {
    const event = { ...draft, sessionId: this.sessionId, at: Date.now() } as SessionStreamEvent;
    if (this.held) this.held.push(event);
    else this.deliver(event);
  }

  private deliver(event: SessionStreamEvent): void {
    for (const entry of [...this.entries]) {
      // A listener asked at each call gets the deltas of the calls that stream.
      if (entry.textDeltas === false && DELTA_TYPES.has(event.type)) continue;
      try {
        entry.listener(event);
      } catch (error) {
        rethrowLater(error);
      }
    }
  }
}

/** A listener's error, rethrown outside the session's code (as XState does with an observer's). */
function rethrowLater(error: unknown): void {
  setTimeout(() => {
    throw error;
  });
}
