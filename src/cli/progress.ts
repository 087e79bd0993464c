/**
 * The CLI's live progress, from the session's event stream: a line per finished model round
 * (who, burst n/max, time, tokens, the tools it called) and per refused tool call (the rule
 * and what the model was told), and a status for the spinner while a round runs.
 *
 * Tool names, errors and refusal messages come from a model or a server: they are stripped
 * of control characters (no escape sequence reaches the terminal) and cut to one short line.
 */
import type { Session } from '../runtime/session.js';
import type { SessionStreamEvent, StreamEventOf } from '../machines/stream-events.js';
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

export interface ProgressOutput {
  /** A line per finished round and per refused tool call (the autopilot's transcript). */
  line?: (text: string) => void;
  /**
   * The spinner's text at each round's start: who works, burst n/max, the model, and the
   * previous round's summary. Called after the CLI's own snapshot-based label, so it wins.
   */
  status?: (text: string) => void;
  modelLabel: string;
}

/** Follows `session` until the returned function is called; never asks for text deltas. */
export function followProgress(session: Session, output: ProgressOutput): () => void {
  let previous: string | null = null;
  let totalTokens = 0;
  return session.subscribe(
    (event) => {
      const line = progressLine(event);
      if (line) output.line?.(line);
      if (event.type === 'round_finished') {
        totalTokens = event.totalUsage.promptTokens + event.totalUsage.completionTokens;
        const tokens = event.usage ? `, ${event.usage.promptTokens + event.usage.completionTokens} tokens` : '';
        const tools = event.toolCalls.length ? ` → ${event.toolCalls.map((t) => plain(t, 40)).join(', ')}` : '';
        previous =
          event.outcome === 'replied' ? `${formatDuration(event.durationMs)}${tokens}${tools}` : `${event.outcome} after ${formatDuration(event.durationMs)}`;
      } else if (event.type === 'round_started' && output.status) {
        const doing = event.agent === 'manager' ? 'Manager thinking' : `Worker ${plain(event.workerId ?? '?', 60)} writing`;
        const now = `${doing} · burst ${event.burst}/${event.maxBurst} · ${plain(output.modelLabel, 60)}`;
        output.status(previous ? `${now} · last round ${plain(previous, 100)} · ${totalTokens} tokens in all` : now);
      }
    },
    { textDeltas: false },
  );
}
