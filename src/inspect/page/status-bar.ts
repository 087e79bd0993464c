/// <reference lib="dom" />
/**
 * The line above the chart (the session, its state, burst, tokens, where it was forked from,
 * where it runs) and the time-travel banner under it.
 */
import type { SessionPayload, TimePoint } from './api.js';
import { byId, fill, h } from './dom.js';
import { shortType, type TimelineEntry } from './timeline.js';

/**
 * @example
 * renderStatus(app.current, app.travel, app.sessionId, { open: openSession, resume: resumeHere });
 */
export function renderStatus(
  current: SessionPayload | null,
  travel: TimePoint | null,
  sessionId: string | null,
  on: { open: (id: string) => void; resume: () => void },
): void {
  const bar = byId('status-bar');
  if (!current) {
    fill(bar, h('span', { class: 'muted' }, sessionId ? `Loading ${sessionId}…` : 'Pick or create a session.'));
    return;
  }
  const v = travel?.view ?? current.view;
  fill(
    bar,
    h('span', { class: 'session-title' }, current.id),
    h('span', { id: 'state-name', class: `state-pill phase-${v.phase}` }, v.state),
    h('span', { id: 'burst', title: 'LLM rounds since the last user action / the limit' }, `burst ${v.burst}/${v.maxBurst}`),
    h('span', { class: 'muted' }, `rounds ${v.rounds}`),
    v.tokens
      ? h(
          'span',
          { id: 'tokens', class: 'muted', title: 'Tokens the model reported: in this burst (of its budget, if set) and in the whole session' },
          `tokens ${v.tokens.burst}${v.tokens.maxBurst !== null ? `/${v.tokens.maxBurst}` : ''} this burst · ${v.tokens.session} session`,
        )
      : null,
    v.forkedFrom
      ? h(
          'a',
          {
            id: 'forked-from',
            href: '#',
            onclick: (e: Event) => {
              e.preventDefault();
              on.open(v.forkedFrom!.id);
            },
          },
          `forked from ${v.forkedFrom.id} #${v.forkedFrom.seq}`,
        )
      : null,
    h('span', { class: 'muted' }, current.revision !== null ? `rev ${current.revision}` : ''),
    current.live ? h('span', { class: 'badge live' }, 'live here') : h('span', { class: 'badge' }, 'from the store'),
    !current.live && current.view.phase === 'running' ? h('button', { type: 'button', id: 'resume', onclick: () => on.resume() }, 'Resume here') : null,
  );
}

/**
 * @example
 * renderBanner(app.travel, timeline.entries, backToLive);
 */
export function renderBanner(travel: TimePoint | null, entries: readonly TimelineEntry[], backToLive: () => void): void {
  const banner = byId('travel-banner');
  banner.hidden = !travel;
  if (!travel) return;
  const entry = entries[travel.seq - 1];
  fill(
    banner,
    h(
      'span',
      null,
      `Time travel: entry #${travel.seq}${entry ? ` (${shortType(entry.type)})` : ''} → `,
      h('strong', { id: 'travel-state' }, travel.state),
      '. Rebuilt by replaying the journal through the machine; read-only. ',
    ),
    travel.entry && travel.entry.kind !== 'created'
      ? h('details', { class: 'event-payload' }, h('summary', null, 'the event'), h('pre', null, JSON.stringify(travel.entry.payload, null, 2)))
      : null,
    travel.divergedAt !== undefined
      ? h(
          'span',
          { class: 'warn' },
          `The replay differs from the recorded state from entry #${travel.divergedAt} (recorded: ${entries[travel.divergedAt - 1]?.state ?? '?'}). `,
        )
      : null,
    h('button', { type: 'button', id: 'back-to-live', onclick: backToLive }, 'Back to live'),
  );
}
