/// <reference lib="dom" />
/**
 * The page's live updates: one EventSource on the inspector's stream, its state on the
 * header badge, and each kind of message handed to its handler. A burst of `session`
 * messages (one per journal entry) is folded into one refresh.
 */
import { api } from './api.js';
import { byId } from './dom.js';
import { LiveDraft } from './live-draft.js';
import { parseProgress, ProgressLine } from './progress-line.js';

export interface LiveHandlers {
  /** The open session changed (journal entries, state): read it again. */
  session: () => void;
  /** The list of sessions changed. */
  sessions: () => void;
  /** The manual model's pending requests changed. */
  model: () => void;
}

/** How long a burst of `session` messages is folded into one refresh. */
const SESSION_REFRESH_MS = 30;

/**
 * Opens the stream for `sessionId` (or for the list only); close the returned source to stop.
 *
 * @example
 * app.stream?.close();
 * app.stream = openLiveStream(app.sessionId, { session: refresh, sessions: refreshList, model: refreshModel });
 */
export function openLiveStream(sessionId: string | null, on: LiveHandlers): EventSource {
  const stream = new EventSource(api.streamUrl(sessionId));
  const badge = byId('connection');
  stream.onopen = () => {
    badge.textContent = 'live';
    badge.className = 'badge on';
  };
  stream.onerror = () => {
    badge.textContent = 'reconnecting…';
    badge.className = 'badge off';
  };
  let queued = false;
  stream.addEventListener('session', () => {
    if (queued) return;
    queued = true;
    setTimeout(() => {
      queued = false;
      on.session();
    }, SESSION_REFRESH_MS);
  });
  // The latest round and tool check of a session this server runs, as they happen.
  const progress = new ProgressLine(byId('live-progress'));
  // And what its model writes: the text and the draft, growing.
  const draft = new LiveDraft(byId('live-draft'));
  stream.addEventListener('progress', (e) => {
    const event = parseProgress((e as MessageEvent).data);
    if (!event || event.sessionId !== sessionId) return;
    progress.show(event);
    draft.show(event);
  });
  stream.addEventListener('sessions', () => on.sessions());
  stream.addEventListener('model', () => on.model());
  return stream;
}
