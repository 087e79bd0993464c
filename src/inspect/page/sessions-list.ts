/// <reference lib="dom" />
/** The sessions column: every session of the store, the open one marked; a click opens one. */
import type { ListedSession } from './api.js';
import { byId, fill, h } from './dom.js';

/**
 * Draws the list.
 *
 * @example
 * renderSessions((await api.sessions()).sessions, app.sessionId, (id) => void openSession(id));
 */
export function renderSessions(sessions: ListedSession[], selectedId: string | null, open: (id: string) => void): void {
  fill(
    byId('sessions'),
    sessions.length === 0
      ? h('li', { class: 'muted' }, 'No sessions in the store yet.')
      : sessions.map((s) =>
          h(
            'li',
            null,
            h(
              'button',
              { type: 'button', class: `session-item${s.id === selectedId ? ' selected' : ''}`, 'data-session-id': s.id, onclick: () => open(s.id) },
              h('span', { class: 'session-id' }, s.id),
              h('span', { class: 'session-meta' }, `${s.packageId ?? '(no package)'} · ${s.state}`),
              h('span', { class: 'session-meta muted' }, `rev ${s.revision} · ${new Date(s.updatedAt).toLocaleString()}`),
              s.live ? h('span', { class: 'badge live' }, 'live here') : null,
            ),
          ),
        ),
  );
}
