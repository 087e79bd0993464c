/// <reference lib="dom" />
/**
 * What a live session's model is writing, as it streams (the server's `progress` messages
 * `text_delta`, `artifact_delta`, `artifact_draft_discarded`): the round's text and the
 * worker's draft per tag, growing. Shown as text only (a model wrote it); redrawn at most
 * once a frame, and only the end of a long text is put in the page.
 */
import type { SessionStreamEvent } from '../../core/machines/stream-events.js';
import { fill, h } from './dom.js';

/** The end of a streamed text the page shows. */
const SHOWN_CHARS = 4_000;

export class LiveDraft {
  private who = '';
  private text = '';
  private readonly tags = new Map<string, string>();
  private note = '';
  private frame = 0;

  constructor(private readonly el: HTMLElement) {
    this.clear();
  }

  show(event: SessionStreamEvent): void {
    switch (event.type) {
      case 'round_started':
        this.reset(event.agent === 'manager' ? 'manager' : `worker ${event.workerId ?? '?'}`);
        break;
      case 'text_delta':
        this.text += event.text;
        break;
      case 'artifact_delta':
        this.tags.set(event.tag, (this.tags.get(event.tag) ?? '') + event.delta);
        this.note = '';
        break;
      case 'artifact_draft_discarded':
        this.tags.clear();
        this.note = `draft discarded (${event.reason}${event.rule ? `: ${event.rule}` : ''})`;
        break;
      case 'waiting':
      case 'done':
      case 'stopped':
        this.clear();
        return;
      default:
        return;
    }
    this.frame ||= requestAnimationFrame(() => this.render());
  }

  clear(): void {
    this.reset('');
    this.el.hidden = true;
    this.el.replaceChildren();
  }

  private reset(who: string): void {
    this.who = who;
    this.text = '';
    this.tags.clear();
    this.note = '';
  }

  private render(): void {
    this.frame = 0;
    const tail = (text: string) => (text.length > SHOWN_CHARS ? `…${text.slice(-SHOWN_CHARS)}` : text);
    const parts = [
      this.text ? h('p', { class: 'live-text' }, h('b', null, `${this.who}: `), tail(this.text)) : null,
      ...[...this.tags].map(([tag, body]) =>
        h('section', { class: 'live-tag', dataset: { tag } }, h('b', null, `draft · ${tag} · ${body.length} characters`), h('pre', null, tail(body))),
      ),
      this.note ? h('p', { class: 'live-note refusal' }, this.note) : null,
    ].filter((part) => part !== null);
    this.el.hidden = parts.length === 0;
    fill(this.el, ...parts);
  }
}
