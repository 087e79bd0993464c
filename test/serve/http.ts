/** A tiny client for the serve tests: real HTTP (fetch) on 127.0.0.1, JSON in and out. */
import type { SessionView } from '../../src/core/view.js';
import type { UserEvent } from '../../src/core/machines/session.events.js';

export interface Reply<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export function client(base: string, token?: string) {
  const call = async <T = any>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply<T>> => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    return { status: res.status, body: parsed as T, headers: res.headers };
  };
  return {
    get: <T = any>(path: string, headers?: Record<string, string>) => call<T>('GET', path, undefined, headers),
    post: <T = any>(path: string, body?: unknown, headers?: Record<string, string>) => call<T>('POST', path, body, headers),
  };
}

/** What a user clicking "yes" at every wait sends next (the CLI autopilot's choices). */
export function nextEvent(view: SessionView, request: string): UserEvent {
  switch (view.waitingReason) {
    case 'intake':
      return view.blackboard.some((b) => b.tag === 'request') ? { type: 'user_confirmed_intake' } : { type: 'user_submitted_input', text: request };
    case 'approve_step':
      return { type: 'user_approved_next_step' };
    case 'review_artifact':
      return { type: 'user_accepted_artifact', artifactId: view.artifact!.id };
    case 'worker_questions':
      return { type: 'user_skipped_questions' };
    default:
      return { type: 'user_submitted_input', text: 'Please go on.' };
  }
}

/** Reads an SSE response into `events` until cancelled. */
export async function readEvents(res: Response): Promise<{ events: Array<{ event: string; id?: string; data: any }>; stop: () => Promise<void> }> {
  const reader = res.body!.getReader();
  const events: Array<{ event: string; id?: string; data: any }> = [];
  let buffer = '';
  const reading = (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += new TextDecoder().decode(value);
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const fields: Record<string, string> = {};
        for (const line of block.split('\n')) {
          const colon = line.indexOf(':');
          if (colon <= 0) continue;
          fields[line.slice(0, colon)] = line.slice(colon + 1).replace(/^ /, '');
        }
        if (fields.event || fields.data)
          events.push({ event: fields.event ?? 'message', ...(fields.id ? { id: fields.id } : {}), data: fields.data ? JSON.parse(fields.data) : null });
      }
    }
  })();
  return {
    events,
    stop: async () => {
      await reader.cancel().catch(() => {});
      await reading.catch(() => {});
    },
  };
}

/** Live events that say what happened, without the pieces (deltas) and state entries between them. */
export function milestones(types: readonly string[]): string[] {
  return types.filter((t) => !['state_entered', 'text_delta', 'tool_call_delta', 'artifact_delta'].includes(t));
}

/** The milestones of a first request to the demo model: the manager's two rounds, up to the step waiting for approval. */
export const FIRST_REQUEST_MILESTONES = [
  'decision',
  'round_started',
  'round_finished',
  'tool_call_checked',
  'round_started',
  'round_finished',
  'tool_call_checked',
  'waiting',
];
