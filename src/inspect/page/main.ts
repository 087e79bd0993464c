/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * The inspector page: sessions, the statechart with the active state, the events enabled
 * now (as forms that send them), the manual model's pending requests, the session's
 * details, and the journal as a timeline with read-only time travel. Live via SSE.
 */
import type { JournalEntry } from '../../store/session-store.js';
import type { SessionView } from '../../runtime/view.js';
import type { SessionContext } from '../../machines/session.context.js';
import { approvalReasonText } from '../../machines/approval.js';
import { api, ApiError, type Info, type PendingRequest, type SessionPayload, type TimePoint } from './api.js';
import { DiagramView } from './diagram-view.js';
import { byId, fill, h } from './dom.js';
import { renderEvents, type EventFormState } from './events-panel.js';
import { renderModelPanel } from './model-panel.js';
import { parseProgress, ProgressLine } from './progress-line.js';

const params = new URLSearchParams(location.search);

type TimelineEntry = Omit<JournalEntry, 'payload'> & { by?: string };

interface AppState {
  info: Info | null;
  diagram: DiagramView | null;
  sessionId: string | null;
  current: SessionPayload | null;
  entries: TimelineEntry[];
  travel: TimePoint | null;
  loadingJournal: Promise<void> | null;
  stream: EventSource | null;
  pending: PendingRequest[];
  forms: EventFormState;
}

const app: AppState = {
  info: null,
  diagram: null,
  sessionId: params.get('session'),
  current: null,
  entries: [],
  travel: null,
  loadingJournal: null,
  stream: null,
  pending: [],
  forms: { signature: '', showAll: false },
};

function showFatal(message: string): void {
  const el = byId('fatal');
  el.hidden = false;
  fill(el, h('strong', null, 'Inspector error: '), message);
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

// ---------------------------------------------------------------- sessions list

async function refreshSessions(): Promise<void> {
  const { sessions } = await api.sessions();
  const list = byId('sessions');
  fill(
    list,
    sessions.length === 0
      ? h('li', { class: 'muted' }, 'No sessions in the store yet.')
      : sessions.map((s) =>
          h(
            'li',
            null,
            h(
              'button',
              {
                type: 'button',
                class: `session-item${s.id === app.sessionId ? ' selected' : ''}`,
                'data-session-id': s.id,
                onclick: () => void openSession(s.id),
              },
              h('span', { class: 'session-id' }, s.id),
              h('span', { class: 'session-meta' }, `${s.packageId ?? '(no package)'} · ${s.state}`),
              h('span', { class: 'session-meta muted' }, `rev ${s.revision} · ${new Date(s.updatedAt).toLocaleString()}`),
              s.live ? h('span', { class: 'badge live' }, 'live here') : null,
            ),
          ),
        ),
  );
}

// ---------------------------------------------------------------- one session

async function openSession(id: string): Promise<void> {
  app.sessionId = id;
  app.current = null;
  app.entries = [];
  app.travel = null;
  app.forms.signature = '';
  const url = new URL(location.href);
  url.searchParams.set('session', id);
  history.replaceState(null, '', url);
  fill(byId('timeline'));
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
    const after = app.entries.at(-1)?.seq ?? 0;
    const { entries } = await api.journal(id, after);
    if (app.sessionId !== id) return;
    const fresh = entries.filter((e) => e.seq > (app.entries.at(-1)?.seq ?? 0));
    app.entries.push(...fresh);
    appendTimeline(fresh);
  };
  const next = (app.loadingJournal ?? Promise.resolve()).then(run, run);
  app.loadingJournal = next.finally(() => {
    if (app.loadingJournal === next) app.loadingJournal = null;
  });
  return next;
}

function shortType(type: string): string {
  const m = /^xstate\.(done|error)\.actor\.(.+)$/.exec(type);
  return m ? `${m[2]} ${m[1] === 'done' ? 'replied' : 'failed'}` : type;
}

function appendTimeline(fresh: TimelineEntry[]): void {
  const list = byId('timeline');
  const frag = document.createDocumentFragment();
  for (const entry of fresh) {
    const previous = app.entries[entry.seq - 2];
    const refused = entry.kind === 'event' && previous !== undefined && previous.state === entry.state;
    frag.append(
      h(
        'li',
        { 'data-seq': String(entry.seq), class: `entry kind-${entry.kind}${refused ? ' refused' : ''}` },
        h(
          'button',
          { type: 'button', onclick: () => void travelTo(entry.seq), title: refused ? 'Refused: the state did not change' : `State after: ${entry.state}` },
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
            onclick: () => void forkAt(entry.seq),
            title: `A new session from the state after entry #${entry.seq}; this one stays as it is`,
          },
          'Fork from here',
        ),
      ),
    );
  }
  list.append(frag);
  byId('journal-count').textContent = `(${app.entries.length})`;
  list.dataset.count = String(app.entries.length);
  markSelectedEntry();
  if (!app.travel) list.scrollTop = list.scrollHeight; // the newest entry, without scrolling the page
}

function markSelectedEntry(): void {
  for (const li of byId('timeline').querySelectorAll<HTMLLIElement>('li.entry')) {
    li.classList.toggle('selected', app.travel !== null && Number(li.dataset.seq) === app.travel.seq);
  }
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

// ---------------------------------------------------------------- rendering

function render(): void {
  markSelectedEntry();
  const current = app.current;
  const travel = app.travel;
  const view = travel?.view ?? current?.view ?? null;
  const context = travel?.context ?? current?.context ?? null;
  renderStatus(current, travel);
  renderBanner(travel);
  if (app.diagram) app.diagram.setActive(view ? view.state : null, travel ? 'past' : 'live');
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

function renderStatus(current: SessionPayload | null, travel: TimePoint | null): void {
  const bar = byId('status-bar');
  if (!current) {
    fill(bar, h('span', { class: 'muted' }, app.sessionId ? `Loading ${app.sessionId}…` : 'Pick or create a session.'));
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
              void openSession(v.forkedFrom!.id);
            },
          },
          `forked from ${v.forkedFrom.id} #${v.forkedFrom.seq}`,
        )
      : null,
    h('span', { class: 'muted' }, current.revision !== null ? `rev ${current.revision}` : ''),
    current.live ? h('span', { class: 'badge live' }, 'live here') : h('span', { class: 'badge' }, 'from the store'),
    !current.live && current.view.phase === 'running' ? h('button', { type: 'button', id: 'resume', onclick: () => void resumeHere() }, 'Resume here') : null,
  );
}

function renderBanner(travel: TimePoint | null): void {
  const banner = byId('travel-banner');
  banner.hidden = !travel;
  if (!travel) return;
  const entry = app.entries[travel.seq - 1];
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
          `The replay differs from the recorded state from entry #${travel.divergedAt} (recorded: ${app.entries[travel.divergedAt - 1]?.state ?? '?'}). `,
        )
      : null,
    h('button', { type: 'button', id: 'back-to-live', onclick: backToLive }, 'Back to live'),
  );
}

function section(title: string, ...children: (Node | string | null)[]): HTMLElement {
  return h('section', { class: 'detail' }, h('h3', null, title), ...children);
}

function details(view: SessionView, context: SessionContext): HTMLElement[] {
  const out: HTMLElement[] = [];
  if (view.notice) out.push(h('p', { class: 'notice' }, view.notice));
  if (view.message) out.push(section('Manager says', h('p', { class: 'message' }, view.message)));
  if (view.assessment) out.push(section('Assessment', h('p', null, view.assessment)));
  if (view.pendingStep) {
    const step = view.pendingStep;
    out.push(
      section(
        'Pending step',
        h(
          'dl',
          { id: 'pending-step' },
          h('dt', null, 'worker'),
          h('dd', null, step.workerId + (step.roleId ? ` (role ${step.roleId})` : '')),
          h('dt', null, 'reason'),
          h('dd', null, step.reason),
          h('dt', null, 'approval'),
          h(
            'dd',
            { id: 'approval-reason' },
            view.approvalRequiredBy ? approvalReasonText(step, view.approvalRequiredBy) : step.requiresApproval ? 'required' : 'not required',
          ),
          step.revises ? [h('dt', null, 'revises'), h('dd', null, `${step.revises}${step.revisionNotes ? `: ${step.revisionNotes}` : ''}`)] : null,
        ),
      ),
    );
  }
  if (view.artifact) {
    const a = view.artifact;
    out.push(
      section(
        `Artifact ${a.id}`,
        h('p', { class: 'muted' }, `${a.workerId}${a.roleId ? ` (${a.roleId})` : ''} · ${a.status}${a.revises ? ` · revises ${a.revises}` : ''}`),
        h(
          'div',
          { id: 'artifact' },
          a.tags.map((t) => h('details', { open: true }, h('summary', null, `${t.tag} v${t.version}`), h('pre', { class: 'body' }, t.body))),
        ),
        a.questions?.length
          ? h(
              'ol',
              { class: 'questions' },
              a.questions.map((q) => h('li', null, `${q.id}: ${q.text}`)),
            )
          : null,
      ),
    );
  }
  if (view.questions?.length)
    out.push(
      section(
        'Questions',
        h(
          'ol',
          { class: 'questions' },
          view.questions.map((q) => h('li', null, `${q.id}: ${q.text}`)),
        ),
      ),
    );
  out.push(
    section(
      'Blackboard',
      view.blackboard.length === 0
        ? h('p', { class: 'muted' }, 'empty')
        : h(
            'ul',
            { id: 'blackboard' },
            view.blackboard.map((b) => {
              const versions = context.blackboard[b.tag] ?? [];
              return h(
                'li',
                null,
                h(
                  'details',
                  null,
                  h('summary', null, h('code', null, b.tag), ` v${b.version} · ${b.writtenBy}`),
                  versions
                    .slice()
                    .reverse()
                    .map((v) =>
                      'body' in v
                        ? h('div', null, h('div', { class: 'muted' }, `v${v.version} by ${v.writtenBy}`), h('pre', { class: 'body' }, v.body))
                        : h(
                            'p',
                            { class: 'muted' },
                            `${v.archived} older version${v.archived === 1 ? '' : 's'} archived (${v.size} chars): the snapshot keeps only the latest body and those under review`,
                          ),
                    ),
                ),
              );
            }),
          ),
    ),
  );
  if (view.artifacts.length) {
    out.push(
      section(
        'Artifacts',
        h(
          'ul',
          null,
          view.artifacts.map((a) => h('li', null, `${a.id} · ${a.workerId} · `, h('span', { class: `status-${a.status}` }, a.status))),
        ),
      ),
    );
  }
  out.push(
    section(
      `Refused events (${view.rejections.length})`,
      view.rejections.length === 0
        ? h('p', { class: 'muted' }, 'none')
        : h(
            'ol',
            { id: 'rejections' },
            view.rejections
              .slice()
              .reverse()
              .map((r) => h('li', null, h('code', null, r.type), ` in ${r.state}: `, r.reason)),
          ),
    ),
  );
  out.push(
    section(
      'Usage',
      h('p', { id: 'usage' }, `${view.usage.promptTokens} prompt + ${view.usage.completionTokens} completion tokens · ${view.rounds} model calls`),
    ),
  );
  // The context can be large (whole conversations): it is written out only when opened.
  const raw = h('details', { class: 'raw', id: 'raw-context' }, h('summary', null, 'Context (JSON)'));
  raw.addEventListener('toggle', () => {
    if (raw.open && !raw.querySelector('pre')) raw.append(h('pre', null, JSON.stringify(context, null, 2)));
  });
  out.push(raw);
  return out;
}

// ---------------------------------------------------------------- actions

function showSendResult(ok: boolean, text: string): void {
  const el = byId('send-result');
  el.className = ok ? 'ok' : 'refusal';
  el.textContent = text;
}

async function sendEvent(event: Record<string, unknown>): Promise<void> {
  if (!app.sessionId) return;
  showSendResult(true, `Sending ${String(event.type)}…`);
  try {
    const outcome = await api.send(app.sessionId, event);
    if (!outcome.ok) {
      showSendResult(false, outcome.error?.message ?? 'Refused.');
    } else {
      showSendResult(
        true,
        outcome.settled
          ? `${String(event.type)} accepted → ${outcome.view?.state ?? ''}`
          : `${String(event.type)} accepted; the session is running (${outcome.view?.state ?? ''}).`,
      );
      app.forms.signature = '';
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

async function refreshModel(): Promise<void> {
  if (!app.info?.model.manual) return;
  const { pending } = await api.model();
  app.pending = pending;
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

// ---------------------------------------------------------------- live updates

function connectStream(): void {
  app.stream?.close();
  const stream = new EventSource(api.streamUrl(app.sessionId));
  app.stream = stream;
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
      void refreshSession().catch((error) => showSendResult(false, errorText(error)));
    }, 30);
  });
  // The latest round and tool check of a session this server runs, as they happen.
  const progress = new ProgressLine(byId('live-progress'));
  stream.addEventListener('progress', (e) => {
    const event = parseProgress((e as MessageEvent).data);
    if (event && event.sessionId === app.sessionId) progress.show(event);
  });
  stream.addEventListener('sessions', () => void refreshSessions().catch(() => {}));
  stream.addEventListener('model', () => void refreshModel().catch(() => {}));
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
  const diagram = new DiagramView(byId('diagram'), info.graph);
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
