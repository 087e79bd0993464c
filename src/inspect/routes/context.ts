/**
 * What every inspector route needs: the runtime and store it serves, the manual model (when
 * the page plays it), the machine's graph, the live hub, and the small HTTP helpers (a typed
 * error that becomes a JSON answer, a query counter, a JSON body reader).
 */
import type { Context } from 'hono';
import type { ManualModel } from '../../models/manual-model.js';
import type { Runtime } from '../../runtime/runtime.js';
import type { SessionStore } from '../../store/session-store.js';
import type { MachineGraph } from '../graph.js';
import type { LiveHub } from '../live-hub.js';
import type { JournalReplayer } from '../replay.js';

export interface InspectorContext {
  runtime: Runtime;
  store: SessionStore;
  manual: ManualModel | null;
  graph: MachineGraph;
  replayer: JournalReplayer;
  hub: LiveHub;
  /** Sends still running, so close() can let them finish their writes. */
  inFlight: Set<Promise<unknown>>;
  /** The session the page opens first. */
  sessionId: string | null;
}

/** Request bodies are small JSON documents (events, model replies): 1 MB at most. */
export const MAX_BODY = 1_000_000;

/** An HTTP failure with a status and a stable code; the error handler answers it as JSON. */
export class HttpError extends Error {
  constructor(readonly status: 400 | 403 | 404 | 405 | 409 | 413 | 415, message: string, readonly code = 'http_error') {
    super(message);
  }
}

/** A non-negative whole number from the query, or undefined when absent; anything else is a 400. */
export function countParam(c: Context, name: string): number | undefined {
  const text = c.req.query(name);
  if (text === undefined || text === '') return undefined;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0) throw new HttpError(400, `Query parameter ${name} must be a whole number ≥ 0 (got "${text}").`, 'bad_request');
  return value;
}

/** The body as JSON (an empty body is `{}`); its size is limited by the bodyLimit middleware. */
export async function readJson(c: Context): Promise<unknown> {
  const text = await c.req.text();
  if (!text.trim()) return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new HttpError(400, 'The request body is not valid JSON.', 'invalid_json');
  }
}

/** JSON that no cache keeps (the page polls and streams; a stale answer would mislead). */
export function json(c: Context, body: unknown, status: 200 | 201 = 200): Response {
  c.header('cache-control', 'no-store');
  return c.json(body as object, status);
}
