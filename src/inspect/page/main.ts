/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * The inspector page: sessions, the statechart with the active state, the events enabled
 * now (as forms that send them), the manual model's pending requests, the session's
 * details, and the journal as a timeline with read-only time travel. Live via SSE.
 * This file holds the page's state and wires the parts together; each part is its module
 * (sessions-list, status-bar, diagram-view, events-panel, model-panel, details-panel,
 * timeline, live-stream).
 */
import { api, ApiError, type Info, type SessionPayload, type TimePoint } from './api.js';
import { details } from './details-panel.js';
import { DiagramView } from './diagram-view.js';
import { byId, fill, h } from './dom.js';
import { renderEvents, type EventFormState } from './events-panel.js';
import { openLiveStream } from './live-stream.js';
import { renderModelPanel } from './model-panel.js';
import { renderSessions } from './sessions-list.js';
import { renderBanner, renderStatus } from './status-bar.js';
import { Timeline } from './timeline.js';

interface AppState {
  info: Info | null;
  diagram: DiagramView | null;
  sessionId: string | null;
  current: SessionPayload | null;
  travel: TimePoint | null;
  loadingJournal: Promise<void> | null;
  stream: EventSource | null;
  forms: EventFormState;
}

const app: AppState = {
  info: null,
  diagram: null,
  sessionId: new URLSearchParams(location.search).get('session'),
  current: null,
  travel: null,
  loadingJournal: null,
  stream: null,
  forms: { signature: '', showAll: false },
};

const timeline = new Timeline({ travel: (seq) => void travelTo(seq), fork: (seq) => void forkAt(seq) });

function showFatal(message: string): void {
  const el = byId('fatal');
  el.hidden = false;
  fill(el, h('strong', null, 'Inspector error: '), message);
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function showSendResult(ok: boolean, text: string): void {
  const el = byId('send-result');
  el.className = ok ? 'ok' : 'refusal';
  el.textContent = text;
}

// ---------------------------------------------------------------- loading

async function refreshSessions(): Promise<void> {
  const { sessions } = await api.sessions();
  renderSessions(sessions, app.sessionId, (id) => void openSession(id));
}

async function openSession(id: string): Promise<void> {
  app.sessionId = id;
  app.current = null;
  app.travel = null;
  app.forms.signature = '';
  const url = new URL(location.href);
  url.searchParams.set('session', id);
  history.replaceState(null, '', url);
  timeline.clear();
  connectStream();
  await Promise.all([refreshSession(), refreshSessions()]);
}

async function refreshSession(): Promise<void> {
  const id = app.sessionId;
  if (!id) return;
  const [payload] = await Promise.all([api.session(id), loadJournal(id)]);
  if (app.sessionId !== id) return;
  app.current = payload;
  render();
}

function loadJournal(id: string): Promise<void> {
  // One fetch at a time; a change that arrives meanwhile is picked up by the next call.
  const run = async () => {
    const { entries } = await api.journal(id, timeline.lastSeq);
    if (app.sessionId !== id) return;
    timeline.append(entries, { follow: !app.travel });
    timeline.select(app.travel?.seq ?? null);
  };
  const next = (app.loadingJournal ?? Promise.resolve()).then(run, run);
  app.loadingJournal = next.finally(() => {
    if (app.loadingJournal === next) app.loadingJournal = null;
  });
  return next;
}

async function refreshModel(): Promise<void> {
  if (!app.info?.model.manual) return;
  const { pending } = await api.model();
  renderModelPanel(byId('model-panel'), pending, {
    reply: async (id, reply) => {
      await api.reply(id, reply);
      await refreshModel();
    },
    fail: async (id, message) => {
      await api.fail(id, message);
      await refreshModel();
    },
  });
}

function connectStream(): void {
  app.stream?.close();
  app.stream = openLiveStream(app.sessionId, {
    session: () => void refreshSession().catch((error) => showSendResult(false, errorText(error))),
    sessions: () => void refreshSessions().catch(() => {}),
    model: () => void refreshModel().catch(() => {}),
  });
}

// ---------------------------------------------------------------- rendering

function render(): void {
  const { current, travel } = app;
  timeline.select(travel?.seq ?? null);
  const view = travel?.view ?? current?.view ?? null;
  const context = travel?.context ?? current?.context ?? null;
  renderStatus(current, travel, app.sessionId, { open: (id) => void openSession(id), resume: () => void resumeHere() });
  renderBanner(travel, timeline.entries, backToLive);
  app.diagram?.setActive(view ? view.state : null, travel ? 'past' : 'live');
  fill(byId('details'), view && context ? details(view, context) : h('p', { class: 'muted' }, 'No session open.'));
  renderEvents(byId('events'), app.forms, {
    view: travel ? null : (current?.view ?? null),
    allEvents: app.info?.events ?? [],
    packages: app.info?.packages ?? [],
    send: sendEvent,
    disabledReason: travel
      ? 'Time travel is read-only: go back to live to send events.'
      : current && !current.live && current.view.phase === 'running'
        ? 'This session is running in another process (or was interrupted): wait, or resume it here.'
        : null,
  });
}

// ---------------------------------------------------------------- actions

async function sendEvent(event: Record<string, unknown>): Promise<void> {
  if (!app.sessionId) return;
  showSendResult(true, `Sending ${String(event.type)}…`);
  // The decision names the wait the page shows: answered elsewhere meanwhile, it is refused, never applied to the next wait.
  const wait = app.current?.view.wait;
  // The forms as they were sent from: if the session moved on meanwhile, they were drawn again
  // already, and a person may be typing in the new ones.
  const sentFrom = app.forms.signature;
  try {
    const outcome = await api.send(app.sessionId, wait === undefined ? event : { ...event, wait });
    if (!outcome.ok) {
      showSendResult(false, outcome.error?.message ?? 'Refused.');
    } else {
      showSendResult(
        true,
        outcome.settled
          ? `${String(event.type)} accepted → ${outcome.view?.state ?? ''}`
          : `${String(event.type)} accepted; the session is running (${outcome.view?.state ?? ''}).`,
      );
      if (app.forms.signature === sentFrom) app.forms.signature = '';
    }
  } catch (error) {
    showSendResult(false, errorText(error));
  }
  await refreshSession();
}

async function resumeHere(): Promise<void> {
  if (!app.sessionId) return;
  try {
    await api.resume(app.sessionId);
  } catch (error) {
    showSendResult(false, errorText(error));
  }
  await refreshSession();
}

/** "Fork from here": a new session from the state after entry `seq`, opened at once. */
async function forkAt(seq: number): Promise<void> {
  const from = app.sessionId;
  if (!from) return;
  try {
    const { id } = await api.fork(from, seq);
    await openSession(id);
    showSendResult(true, `Forked ${from} after entry #${seq}: this is the fork, ${id}.`);
  } catch (error) {
    showSendResult(false, `Fork failed: ${errorText(error)}`);
  }
}

async function travelTo(seq: number): Promise<void> {
  if (!app.sessionId) return;
  try {
    app.travel = await api.at(app.sessionId, seq);
  } catch (error) {
    showSendResult(false, `Time travel failed: ${errorText(error)}`);
    return;
  }
  render();
}

function backToLive(): void {
  app.travel = null;
  render();
}

// ---------------------------------------------------------------- start

async function start(): Promise<void> {
  if (!api.streamUrl(null).includes('token=') || !new URLSearchParams(location.search).get('token')) {
    showFatal('This page needs its token: open the full URL printed by `steward inspect` (…/?token=…).');
    return;
  }
  let info: Info;
  try {
    info = await api.info();
  } catch (error) {
    showFatal(error instanceof ApiError && error.status === 403 ? `${error.message}` : errorText(error));
    return;
  }
  app.info = info;
  document.body.dataset.machine = info.machineId;
  byId('model-label').textContent = `model: ${info.model.label}`;
  byId('model-panel').hidden = !info.model.manual;
  const select = byId<HTMLSelectElement>('new-package');
  fill(
    select,
    info.packages.map((p) => h('option', { value: p.id }, `${p.id} — ${p.title}`)),
    h('option', { value: '' }, '(choose the package later)'),
  );
  byId('new-session').addEventListener('submit', (event) => {
    event.preventDefault();
    void api
      .createSession(select.value || null)
      .then((r) => openSession(r.id))
      .catch((error) => showSendResult(false, errorText(error)));
  });
  byId<HTMLInputElement>('show-all').addEventListener('change', (event) => {
    app.forms.showAll = (event.target as HTMLInputElement).checked;
    app.forms.signature = '';
    render();
  });

  // The drawing takes a moment (ELK); the data does not wait for it.
  const diagram = new DiagramView(byId('diagram'), info.graph, info.keepsLayouts);
  void diagram.ready.then(
    () => {
      app.diagram = diagram;
      document.body.dataset.diagram = 'ready';
      render();
    },
    (error) => fill(byId('diagram'), h('p', { class: 'refusal' }, `The statechart could not be laid out: ${errorText(error)}`)),
  );

  const sessionId = app.sessionId ?? info.sessionId;
  if (!sessionId) connectStream();
  await Promise.all([refreshSessions(), refreshModel(), sessionId ? openSession(sessionId) : Promise.resolve()]);
  document.body.dataset.ready = 'true';
}

void start().catch((error) => showFatal(errorText(error)));
