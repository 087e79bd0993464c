/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * The inspector's JSON API, with the token from the page's URL on every request. The sessions
 * list, a new session and the journal are `steward serve`'s routes (paged: this file follows
 * the pages); the rest is the inspector's own (src/inspect/server.ts).
 */
import { userOf, type JournalEntry, type SessionSummary } from '../../store/session-store.js';
import type { SessionView } from '../../core/view.js';
import type { SessionContext } from '../../core/machines/session.context.js';
import type { MachineGraph } from '../graph.js';
import type { Placement } from '../placement.js';
import type { ChatMessage, ToolSpec } from '../../core/models/model.js';

const params = new URLSearchParams(location.search);
export const token = params.get('token') ?? '';

export interface Info {
  machineId: string;
  graph: MachineGraph;
  model: { label: string; manual: boolean };
  sessionId: string | null;
  packages: { id: string; title: string }[];
  events: string[];
  /** Whether the inspector keeps laid-out charts between page loads (GET/PUT /api/layouts/:key). */
  keepsLayouts: boolean;
}

export interface SessionPayload {
  id: string;
  revision: number | null;
  live: boolean;
  updatedAt: string | null;
  createdAt: string | null;
  view: SessionView;
  context: SessionContext;
}

export interface TimePoint {
  seq: number;
  state: string;
  recordedState: string | null;
  /** The journal entry, payload (the event) included. */
  entry: JournalEntry | null;
  divergedAt?: number;
  view: SessionView;
  context: SessionContext;
}

export interface SendOutcome {
  ok: boolean;
  settled: boolean;
  error?: { code: string; message: string };
  view?: SessionView;
}

export interface PendingRequest {
  id: string;
  agent: 'manager' | 'worker';
  at: string;
  sessionId?: string;
  tools: ToolSpec[];
  messages: ChatMessage[];
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`/api${path}`, {
    method,
    headers: { 'x-steward-token': token, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const data = (await res.json().catch(() => ({}))) as { error?: { code: string; message: string } };
  if (!res.ok) throw new ApiError(res.status, data.error?.code ?? 'http_error', data.error?.message ?? `HTTP ${res.status}`);
  return data as T;
}

const enc = encodeURIComponent;

/** A journal entry as the timeline shows it: without its payload, with who acted. */
export type TimelineEntry = Omit<JournalEntry, 'payload'> & { by?: string };

/** Every page of the store's sessions (serve's GET /sessions), each marked when it runs in this inspector. */
/** A session of the list: its summary, and whether this inspector's process runs it. */
export type ListedSession = SessionSummary & { live: boolean };

async function allSessions(): Promise<{ sessions: ListedSession[] }> {
  const sessions: SessionSummary[] = [];
  let cursor: string | null = null;
  do {
    const page: { sessions: SessionSummary[]; next: string | null } = await call('GET', `/sessions?limit=200${cursor ? `&cursor=${enc(cursor)}` : ''}`);
    sessions.push(...page.sessions);
    cursor = page.next;
  } while (cursor);
  const live = new Set((await call<{ ids: string[] }>('GET', '/live')).ids);
  return { sessions: sessions.map((s) => ({ ...s, live: live.has(s.id) })) };
}

/** The journal after entry `after`, every page of it (serve's GET /sessions/:id/journal). */
async function journalAfter(id: string, after: number): Promise<{ entries: TimelineEntry[] }> {
  const entries: TimelineEntry[] = [];
  let next: number | null = after;
  while (next !== null) {
    const page: { entries: JournalEntry[]; next: number | null } = await call('GET', `/sessions/${enc(id)}/journal?after=${next}&limit=1000`);
    for (const { payload, ...rest } of page.entries) {
      const by = userOf(payload);
      entries.push(by !== undefined ? { ...rest, by } : rest);
    }
    next = page.next;
  }
  return { entries };
}

export const api = {
  info: () => call<Info>('GET', '/info'),
  /** The layout kept under `key` (layout-key.ts), or null. */
  keptLayout: async (key: string) => (await call<{ placement: Placement | null }>('GET', `/layouts/${key}`)).placement,
  keepLayout: (key: string, placement: Placement) => call<unknown>('PUT', `/layouts/${key}`, placement),
  sessions: allSessions,
  createSession: async (packageId: string | null) => {
    const created = await call<{ view: SessionView }>('POST', '/sessions', packageId ? { packageId } : {});
    return { id: created.view.id };
  },
  session: (id: string) => call<SessionPayload>('GET', `/sessions/${enc(id)}`),
  journal: journalAfter,
  at: (id: string, seq: number) => call<TimePoint>('GET', `/sessions/${enc(id)}/at/${seq}`),
  send: (id: string, event: Record<string, unknown>) => call<SendOutcome>('POST', `/sessions/${enc(id)}/events`, event),
  fork: (id: string, atSeq: number) => call<{ id: string }>('POST', `/sessions/${enc(id)}/fork`, { atSeq }),
  resume: (id: string) => call<{ ok: boolean }>('POST', `/sessions/${enc(id)}/resume`, {}),
  model: () => call<{ manual: boolean; label: string; pending: PendingRequest[] }>('GET', '/model'),
  reply: (requestId: string, reply: { content?: string | null; toolCalls: { name: string; arguments: unknown }[] }) =>
    call<{ ok: boolean }>('POST', `/model/${enc(requestId)}/reply`, reply),
  fail: (requestId: string, message: string) => call<{ ok: boolean }>('POST', `/model/${enc(requestId)}/fail`, { message }),
  streamUrl: (sessionId: string | null) => `/api/stream?token=${enc(token)}${sessionId ? `&session=${enc(sessionId)}` : ''}`,
};
