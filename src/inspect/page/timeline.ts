/// <reference lib="dom" />
/**
 * The journal column: one line per entry (its seq, event, the state after it, who sent it),
 * a click travels there, and "Fork from here" starts a new session from that point. A
 * refused event is one after which the state did not change.
 */
import type { JournalEntry } from '../../store/session-store.js';
import { byId, h } from './dom.js';

export type TimelineEntry = Omit<JournalEntry, 'payload'> & { by?: string };

/** An entry's type as a person reads it: "managerTurn replied" for an actor's done event. */
export function shortType(type: string): string {
  const m = /^xstate\.(done|error)\.actor\.(.+)$/.exec(type);
  return m ? `${m[2]} ${m[1] === 'done' ? 'replied' : 'failed'}` : type;
}

/**
 * The list of journal entries of the open session.
 *
 * @example
 * const timeline = new Timeline({ travel: (seq) => travelTo(seq), fork: (seq) => forkAt(seq) });
 * timeline.append(entries, { follow: true });
 */
export class Timeline {
  /** Every entry shown, in seq order (entry n at index n - 1). */
  readonly entries: TimelineEntry[] = [];
  private readonly list = byId('timeline');

  constructor(private readonly on: { travel: (seq: number) => void; fork: (seq: number) => void }) {}

  clear(): void {
    this.entries.length = 0;
    this.list.replaceChildren();
  }

  /** The last seq shown (0 when none). */
  get lastSeq(): number {
    return this.entries.at(-1)?.seq ?? 0;
  }

  /** Appends the entries after the last one shown; `follow` scrolls the list (not the page) to the newest. */
  append(fresh: TimelineEntry[], { follow }: { follow: boolean }): void {
    const frag = document.createDocumentFragment();
    for (const entry of fresh) {
      if (entry.seq <= this.lastSeq) continue;
      const previous = this.entries.at(-1);
      this.entries.push(entry);
      frag.append(this.line(entry, entry.kind === 'event' && previous !== undefined && previous.state === entry.state));
    }
    this.list.append(frag);
    byId('journal-count').textContent = `(${this.entries.length})`;
    this.list.dataset.count = String(this.entries.length);
    if (follow) this.list.scrollTop = this.list.scrollHeight;
  }

  /** Marks the entry time travel shows (none: `null`). */
  select(seq: number | null): void {
    for (const li of this.list.querySelectorAll<HTMLLIElement>('li.entry')) li.classList.toggle('selected', seq !== null && Number(li.dataset.seq) === seq);
  }

  private line(entry: TimelineEntry, refused: boolean): HTMLElement {
    return h(
      'li',
      { 'data-seq': String(entry.seq), class: `entry kind-${entry.kind}${refused ? ' refused' : ''}` },
      h(
        'button',
        { type: 'button', onclick: () => this.on.travel(entry.seq), title: refused ? 'Refused: the state did not change' : `State after: ${entry.state}` },
        h('span', { class: 'seq' }, `#${entry.seq}`),
        h('span', { class: 'type' }, shortType(entry.type)),
        h('span', { class: 'arrow' }, '→'),
        h('span', { class: 'to' }, entry.state),
        entry.by !== undefined
          ? h('span', { class: 'by', title: `by ${entry.by}` }, `by ${entry.by.length > 24 ? `${entry.by.slice(0, 23)}…` : entry.by}`)
          : null,
        h('time', { datetime: entry.at }, new Date(entry.at).toLocaleTimeString()),
      ),
      h(
        'button',
        {
          type: 'button',
          class: 'fork',
          'data-fork': String(entry.seq),
          onclick: () => this.on.fork(entry.seq),
          title: `A new session from the state after entry #${entry.seq}; this one stays as it is`,
        },
        'Fork from here',
      ),
    );
  }
}
