/**
 * The CLI's live progress, from the session's event stream: a line per finished model round
 * (who, burst n/max, time, tokens, the tools it called) and per refused tool call (the rule
 * and what the model was told), and a status for the spinner while a round runs. What a model
 * streams is shown as it grows on a terminal's live line (the manager's text, a worker's
 * draft); a plain log gets one line per finished text and per finished or discarded draft.
 *
 * Tool names, errors and refusal messages come from a model or a server: they are stripped
 * of control characters (no escape sequence reaches the terminal) and cut to one short line.
 */
import type { Session } from '../runtime/session.js';
import type { SessionStreamEvent, StreamEventOf } from '../core/machines/stream-events.js';
import { safeLineAs } from '../text/safe-text.js';

const MAX_DETAIL = 160;

/**
 * `text` made safe for one terminal line: what safe-text.ts shows visibly elsewhere (C0/C1
 * controls, DEL, bidi controls, line separators) becomes a space here, the rest is cut to `max`.
 */
export function plain(text: string, max = MAX_DETAIL): string {
  const flat = safeLineAs(text, ' ').replace(/ {2,}/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

export function formatDuration(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

const who = (e: { agent: 'manager' | 'worker'; workerId: string | null }) => (e.agent === 'manager' ? 'manager' : `worker ${plain(e.workerId ?? '?', 60)}`);

/** "manager · burst 1/12 · 1.2 s · 120+30 tokens → run_worker" */
export function roundLine(e: StreamEventOf<'round_finished'>): string {
  const parts = [who(e), `burst ${e.burst}/${e.maxBurst}`, formatDuration(e.durationMs)];
  if (e.usage) parts.push(`${e.usage.promptTokens}+${e.usage.completionTokens} tokens`);
  const head = parts.join(' · ');
  if (e.outcome === 'failed') return `✗ ${head} · failed: ${plain(e.error ?? 'unknown error')}`;
  if (e.outcome === 'stopped') return `■ ${head} · stopped`;
  return `✓ ${head}${e.toolCalls.length ? ` → ${e.toolCalls.map((t) => plain(t, 60)).join(', ')}` : ' → (no tool call)'}`;
}

/** "✗ refused run_worker (workerIsRegistered): There is no worker …" */
export function refusalLine(e: StreamEventOf<'tool_call_checked'>): string {
  return `✗ refused ${plain(e.tool, 60)} (${plain(e.rule ?? 'rule', 40)}): ${plain(e.message ?? '')}`;
}

/** The permanent line an event deserves in a transcript, if any. */
export function progressLine(event: SessionStreamEvent): string | undefined {
  if (event.type === 'round_finished') return roundLine(event);
  if (event.type === 'tool_call_checked' && !event.accepted) return refusalLine(event);
  return undefined;
}

/** `text`'s end, made safe for one terminal line and cut to `max` from the left. */
export function plainTail(text: string, max: number): string {
  const flat = safeLineAs(text.slice(-4 * max), ' ')
    .replace(/ {2,}/g, ' ')
    .trim();
  return flat.length > max ? `…${flat.slice(flat.length - max + 1)}` : flat;
}

const count = (n: number) => `${n.toLocaleString('en-US')} character${n === 1 ? '' : 's'}`;

/** How much of a streamed text the progress keeps: enough for a line. */
const KEPT_CHARS = 1_000;

/** What a round has streamed so far: its text, and its draft per tag (only the start and the end of each are kept). */
class Streamed {
  /** The text's start (for the finished line) and its end (for the live line). */
  first = '';
  last = '';
  textChars = 0;
  readonly tags = new Map<string, { tail: string; chars: number }>();

  constructor(readonly who: string) {}

  addText(piece: string): void {
    if (this.first.length < KEPT_CHARS) this.first = (this.first + piece).slice(0, KEPT_CHARS);
    this.last = (this.last + piece).slice(-KEPT_CHARS);
    this.textChars += piece.length;
  }

  addDraft(tag: string, piece: string): { tail: string; chars: number } {
    const draft = this.tags.get(tag) ?? { tail: '', chars: 0 };
    draft.tail = (draft.tail + piece).slice(-KEPT_CHARS);
    draft.chars += piece.length;
    this.tags.set(tag, draft);
    return draft;
  }
}

export interface ProgressOutput {
  /** A line per finished round and per refused tool call (the autopilot's transcript). */
  line?: (text: string) => void;
  /**
   * The spinner's text at each round's start: who works, burst n/max, the model, and the
   * previous round's summary. Called after the CLI's own snapshot-based label, so it wins.
   */
  status?: (text: string) => void;
  modelLabel: string;
  /**
   * A terminal's live line: called as the manager's text or a worker's draft grows, with one
   * line of at most `width` characters, made safe.
   */
  live?: (text: string) => void;
  /** Where a plain log gets one line per finished text and per finished or discarded draft. */
  drafts?: (text: string) => void;
  /** The live line's width (default 80). */
  width?: number;
}

/**
 * The rounds under way, by who runs them (the manager, or a worker): in a fan-out several
 * workers run at once, and each one's text and draft are kept apart (their pieces arrive
 * interleaved). By agent, not by round number: rounds started together share their number.
 */
class RoundsUnderWay {
  private readonly rounds = new Map<string, Streamed>();
  private readonly writing = new Set<string>();

  start(who: string, workerId: string | null): Streamed {
    const streamed = new Streamed(who);
    this.rounds.set(who, streamed);
    if (workerId !== null) this.writing.add(workerId);
    return streamed;
  }

  get(who: string): Streamed | undefined {
    return this.rounds.get(who);
  }

  finish(workerId: string | null): void {
    if (workerId !== null) this.writing.delete(workerId);
  }

  /** The workers whose rounds run now, when more than one does (a fan-out); else undefined. */
  together(): string | undefined {
    return this.writing.size > 1 ? this.stillWriting() : undefined;
  }

  /** The workers whose rounds still run (after one of a fan-out finished); undefined: none. */
  stillWriting(): string | undefined {
    const ids = [...this.writing].map((id) => plain(id, 40));
    if (ids.length === 0) return undefined;
    return ids.length === 1 ? `Worker ${ids[0]} writing` : `Workers ${ids.join(', ')} writing at once`;
  }
}

/** Follows `session` until the returned function is called; asks for deltas only when `live` or `drafts` is set. */
export function followProgress(session: Session, output: ProgressOutput): () => void {
  let previous: string | null = null;
  let totalTokens = 0;
  const width = Math.max(20, output.width ?? 80);
  const rounds = new RoundsUnderWay();
  // A redraw per piece: a terminal takes far more than a model writes, and a spinner only keeps the last.
  const draw = (text: string) => output.live?.(text);
  const whoOf = (e: { agent: string; workerId: string | null }) => (e.agent === 'manager' ? 'manager' : `worker ${plain(e.workerId ?? '?', 40)}`);
  const streamed = (event: SessionStreamEvent) => {
    if (event.type === 'round_started') {
      rounds.start(whoOf(event), event.agent === 'worker' ? event.workerId : null);
    } else if (event.type === 'text_delta') {
      const round = rounds.get(whoOf(event));
      if (!round) return;
      round.addText(event.text);
      const head = `${round.who}: `;
      draw(head + plainTail(round.last, width - head.length));
    } else if (event.type === 'artifact_delta') {
      const who = `worker ${plain(event.worker, 40)}`;
      const round = rounds.get(who) ?? rounds.start(who, null);
      const draft = round.addDraft(event.tag, event.delta);
      const head = `${plain(event.worker, 30)} → ${plain(event.tag, 30)} (${count(draft.chars)}): `;
      draw(head + plainTail(draft.tail, Math.max(10, width - head.length)));
    } else if (event.type === 'round_finished') {
      rounds.finish(event.agent === 'worker' ? event.workerId : null);
      const round = rounds.get(whoOf(event));
      if (round?.textChars) output.drafts?.(`✎ ${round.who}: ${plain(round.first, MAX_DETAIL)}`);
    } else if (event.type === 'artifact_draft_discarded') {
      const round = rounds.get(`worker ${plain(event.worker, 40)}`);
      if (!round) return;
      output.drafts?.(`✎ draft by ${plain(event.worker, 40)} discarded (${event.reason}${event.rule ? `: ${plain(event.rule, 40)}` : ''})`);
      round.tags.clear();
    } else if (event.type === 'artifact_published') {
      const round = rounds.get(`worker ${plain(event.workerId, 40)}`);
      if (!round) return;
      for (const [tag, draft] of round.tags) output.drafts?.(`✎ ${plain(tag, 40)} by ${plain(event.workerId, 40)}: ${count(draft.chars)} drafted`);
      round.tags.clear();
    }
  };
  return session.subscribe(
    (event) => {
      const line = progressLine(event);
      if (line) output.line?.(line);
      streamed(event);
      if (event.type === 'round_finished') {
        totalTokens = event.totalUsage.promptTokens + event.totalUsage.completionTokens;
        const tokens = event.usage ? `, ${event.usage.promptTokens + event.usage.completionTokens} tokens` : '';
        const tools = event.toolCalls.length ? ` → ${event.toolCalls.map((t) => plain(t, 40)).join(', ')}` : '';
        previous =
          event.outcome === 'replied' ? `${formatDuration(event.durationMs)}${tokens}${tools}` : `${event.outcome} after ${formatDuration(event.durationMs)}`;
        // The others of a fan-out still write: the status says who.
        const still = rounds.stillWriting();
        if (still && output.status) output.status(`${still} · last round ${plain(previous, 100)} · ${totalTokens} tokens in all`);
      } else if (event.type === 'round_started' && output.status) {
        const doing = rounds.together() ?? (event.agent === 'manager' ? 'Manager thinking' : `Worker ${plain(event.workerId ?? '?', 60)} writing`);
        const now = `${doing} · burst ${event.burst}/${event.maxBurst} · ${plain(output.modelLabel, 60)}`;
        output.status(previous ? `${now} · last round ${plain(previous, 100)} · ${totalTokens} tokens in all` : now);
      }
    },
    // Deltas only when something shows them (the model then streams its replies).
    { textDeltas: Boolean(output.live || output.drafts) },
  );
}
