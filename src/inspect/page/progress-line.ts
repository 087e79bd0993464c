/// <reference lib="dom" />
/**
 * The latest model round and tool check of a live session, from the server's `progress`
 * messages (core/machines/stream-events.ts). Shown as text only: tool names and messages come
 * from a model. Only the types are imported, so the page bundle does not grow.
 */
import type { SessionStreamEvent } from '../../core/machines/stream-events.js';
import { fill, h } from './dom.js';

const duration = (ms: number) => (ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`);
const who = (e: { agent: string; workerId: string | null }) => (e.agent === 'manager' ? 'manager' : `worker ${e.workerId ?? '?'}`);

/** What the progress line shows for `event`, or null when the event does not change it. */
export function progressText(event: SessionStreamEvent): { round?: string; tool?: string; ok?: boolean } | null {
  switch (event.type) {
    case 'round_started':
      return { round: `${who(event)} · burst ${event.burst}/${event.maxBurst} · calling the model…`, tool: '' };
    case 'round_finished': {
      const tokens = event.usage ? ` · ${event.usage.promptTokens}+${event.usage.completionTokens} tokens` : '';
      const tail =
        event.outcome === 'replied' ? ` → ${event.toolCalls.join(', ') || '(no tool call)'}` : ` · ${event.outcome}${event.error ? `: ${event.error}` : ''}`;
      return {
        round: `${who(event)} · burst ${event.burst}/${event.maxBurst} · ${duration(event.durationMs)}${tokens}${tail}`,
        ok: event.outcome === 'replied',
      };
    }
    case 'tool_call_checked':
      return { tool: event.accepted ? `✓ ${event.tool}` : `✗ ${event.tool} refused (${event.rule ?? 'rule'}): ${event.message ?? ''}` };
    default:
      return null;
  }
}

/** Parses one SSE `progress` message; anything malformed is ignored. */
export function parseProgress(data: unknown): SessionStreamEvent | null {
  if (typeof data !== 'string' || data.length > 100_000) return null;
  try {
    const value = JSON.parse(data) as { type?: unknown };
    return value && typeof value === 'object' && typeof value.type === 'string' ? (value as SessionStreamEvent) : null;
  } catch {
    return null;
  }
}

export class ProgressLine {
  private round = '';
  private tool = '';
  private ok = true;
  /** The workers whose rounds are under way: in a fan-out several run at once (by worker: rounds started together share their number). */
  private readonly writing = new Set<string>();

  /** Starts empty: a line left from the session shown before is cleared. */
  constructor(private readonly el: HTMLElement) {
    this.clear();
  }

  show(event: SessionStreamEvent): void {
    if (event.type === 'round_started' && event.agent === 'worker') this.writing.add(event.workerId ?? '?');
    if (event.type === 'round_finished' && event.agent === 'worker') this.writing.delete(event.workerId ?? '?');
    const text = progressText(event);
    if (!text) return;
    const together = this.writing.size > 1 ? `writing at once: ${[...this.writing].join(', ')}` : '';
    if (text.round !== undefined) this.round = text.round;
    if (text.tool !== undefined) this.tool = text.tool;
    if (text.ok !== undefined) this.ok = text.ok;
    this.el.hidden = false;
    fill(
      this.el,
      h('span', { class: `progress-round${this.ok ? '' : ' refusal'}` }, this.round),
      this.tool ? h('span', { class: `progress-tool${this.tool.startsWith('✗') ? ' refusal' : ''}` }, this.tool) : null,
      together ? h('span', { class: 'progress-team', id: 'progress-team' }, together) : null,
    );
  }

  clear(): void {
    this.writing.clear();
    this.round = this.tool = '';
    this.ok = true;
    this.el.hidden = true;
    this.el.replaceChildren();
  }
}
