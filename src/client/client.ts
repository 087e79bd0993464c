/**
 * A typed client of `steward serve` for browsers and Node alike: only `fetch`, `URL`,
 * `Headers` and streams, no Node built-in (a test bundles it for the browser). Requests and
 * answers are checked with the zod schemas the server itself validates with
 * (src/serve/schemas.ts, the user events of the chart), so a mismatch is a typed
 * `bad_response`, not a wrong field somewhere later in the app.
 */
import * as z from 'zod';
import type { UserEvent } from '../core/machines/session.events.js';
import type { SessionView } from '../core/view.js';
import type { JournalEntry, SessionSummary } from '../store/records.js';
import {
  AcceptedResponse,
  CreateSessionBody,
  ForkBody,
  JournalResponse,
  ListResponse,
  SendResultSchema,
  StreamTicketResponse,
  UserEventSchema,
  ViewResponse,
} from '../serve/schemas.js';
import { badResponse, errorOfResponse, networkError, retryAfterOfResponse } from './errors.js';
import { streamSession, type ReconnectOptions, type StreamMessage, type StreamOptions } from './stream.js';

/** The `fetch` the client calls: the global one by default, or any with its signature (a test's, a proxy's). */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export interface ClientOptions {
  /** Where the server answers: `http://127.0.0.1:4800`, or the path an app mounts it at (`/steward`). */
  baseUrl: string;
  /** The bearer token (STEWARD_TOKEN or a named token), or a function that returns the current one. */
  token?: string | (() => string | Promise<string>);
  /** Sent as X-Steward-User: who acts, where the token does not say it. */
  user?: string;
  fetch?: FetchLike;
  /** How the stream reconnects after a dropped connection. */
  reconnect?: ReconnectOptions;
}

/** A session's view and the revision it was read at. */
export interface ViewAnswer {
  view: SessionView;
  revision: number | null;
}

/** A send that ran: the view once the session waits again (or is done), or why it was refused, as `session.send()` says it. */
export type SendAnswer =
  /** `repeated`: nothing was applied, and nothing needed to be (a key sent again, or the decision that already closed the wait it names). */
  | { ok: true; view: SessionView; revision: number | null; repeated?: true }
  | {
      ok: false;
      /**
       * `retryAfterSeconds`: the server's Retry-After, when the refusal says to come back
       * (`session_running_elsewhere`, `lease_lost`, `server_busy`…): the session runs a model
       * call elsewhere, and asking sooner only loads the server that runs it. `wait`,
       * `openWait` (wait_closed): the wait the event named, and the one open now (null: none).
       * `not_a_decider` (a 403): the open wait names the groups who decide it and the caller's
       * token is in none of them (nor in `admin`); `enabled` says what the session takes now.
       */
      error: { code: string; message: string; enabled?: string[]; retryAfterSeconds?: number; wait?: number; openWait?: number | null };
      view: SessionView;
      revision: number | null;
    };

/** An asynchronous send the server took (202): the stream and `get()` tell the rest. */
export interface Accepted {
  ok: true;
  accepted: true;
  sessionId: string;
  revision: number | null;
}

export interface SendRequestOptions {
  /** false: answer as soon as the server took the event (202), without waiting for the run. Default true. */
  wait?: boolean;
  /** Sent as Idempotency-Key: a retried send with the same key is not taken twice by a server that honours it. */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

export type { SessionSummary, JournalEntry };
export type StreamTicket = z.infer<typeof StreamTicketResponse>;
export type { StreamMessage, StreamOptions, ReconnectOptions };

interface Call {
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal | undefined;
  /** The session the request is about, for the errors that name it. */
  sessionId?: string;
}

/**
 * A client of one `steward serve` (or an app that mounts its routes). Every method rejects
 * with the library's typed errors: SessionNotFoundError, ConflictError, … for the runtime's
 * codes, RequestError for HTTP's own (unauthorized, rate_limited, invalid_request, network_error, …).
 *
 * @example
 * const client = new StewardClient({ baseUrl: 'http://127.0.0.1:4800', token: 'secret' });
 * const { view } = await client.create({ packageId: 'tiny' });
 * await client.send(view.id, { type: 'user_submitted_input', text: 'Green tea.' });
 * for await (const message of client.stream(view.id)) if (message.type === 'session') console.log(message.event.type);
 */
export class StewardClient {
  private readonly base: string;
  private readonly fetcher: FetchLike;

  constructor(private readonly options: ClientOptions) {
    this.base = options.baseUrl.replace(/\/+$/, '');
    // Called unbound, the browser's fetch throws "Illegal invocation": keep it on globalThis.
    this.fetcher = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  }

  /**
   * Creates a session; it waits for its first input (or for a package to be chosen).
   *
   * @example
   * const { view } = await client.create({ packageId: 'code-review', maxBurst: 8 });
   */
  async create(options: z.input<typeof CreateSessionBody> = {}): Promise<ViewAnswer> {
    const body = CreateSessionBody.parse(options);
    return this.viewAnswer('POST /sessions', { method: 'POST', path: '/sessions', body });
  }

  /**
   * One page of sessions, most recently updated first; `next` is the `after` of the next page (null on the last).
   *
   * @example
   * for (let page = await client.list({ limit: 20 }); ; page = await client.list({ limit: 20, after: page.next })) {
   *   console.log(page.sessions.map((s) => s.id));
   *   if (!page.next) break;
   * }
   */
  async list(options: { limit?: number; after?: string | null } = {}): Promise<{ sessions: SessionSummary[]; next: string | null }> {
    const query = new URLSearchParams();
    if (options.limit !== undefined) query.set('limit', String(options.limit));
    if (options.after) query.set('cursor', options.after);
    const suffix = query.size ? `?${query}` : '';
    return this.checked(ListResponse, 'GET /sessions', { method: 'GET', path: `/sessions${suffix}` });
  }

  /**
   * The session's view and revision.
   *
   * @example
   * const { view } = await client.get(id);
   * console.log(view.state, view.enabledEvents);
   */
  async get(id: string, options: { signal?: AbortSignal } = {}): Promise<ViewAnswer> {
    return this.viewAnswer('GET /sessions/{id}', { method: 'GET', path: `/sessions/${encodeURIComponent(id)}`, signal: options.signal, sessionId: id });
  }

  /**
   * Sends a user event. By default it resolves once the session waits again (or is done),
   * with the SendResult as `session.send()` gives it (`ok: false` with the code when the
   * session refused the event); with `{ wait: false }` as soon as the server took it (202),
   * and then the server streams the run's model calls for the stream you open next (it streams
   * only while someone follows the session).
   *
   * @example
   * const result = await client.send(id, { type: 'user_approved_next_step', edits: { reason: 'Keep it short.' } });
   * if (!result.ok) console.log(result.error.code, result.error.message);
   * await client.send(id, { type: 'user_confirmed_intake' }, { wait: false, idempotencyKey: crypto.randomUUID() });
   */
  send(id: string, event: UserEvent, options?: SendRequestOptions & { wait?: true }): Promise<SendAnswer>;
  send(id: string, event: UserEvent, options: SendRequestOptions & { wait: false }): Promise<Accepted | SendAnswer>;
  send(id: string, event: UserEvent, options?: SendRequestOptions): Promise<Accepted | SendAnswer>;
  async send(id: string, event: UserEvent, options: SendRequestOptions = {}): Promise<Accepted | SendAnswer> {
    // Checked here, so a malformed event is a typed error before anything is sent.
    const body = UserEventSchema.parse(event);
    const headers: Record<string, string> = {};
    if (options.wait === false) headers.prefer = 'respond-async';
    if (options.idempotencyKey !== undefined) headers['idempotency-key'] = options.idempotencyKey;
    const what = 'POST /sessions/{id}/events';
    const { response, json } = await this.request({
      method: 'POST',
      path: `/sessions/${encodeURIComponent(id)}/events`,
      body,
      headers,
      signal: options.signal,
      sessionId: id,
    });
    if (response.status === 202) {
      const accepted = AcceptedResponse.safeParse(json);
      if (!accepted.success) throw badResponse(what, response.status, z.prettifyError(accepted.error));
      return { ok: true, ...accepted.data };
    }
    // 200, and a refusal the session itself made (400 invalid_event, 409, 503): the SendResult.
    const result = SendResultSchema.safeParse(json);
    if (result.success) {
      const answer = result.data as unknown as SendAnswer;
      const retryAfterSeconds = retryAfterOfResponse(response);
      if (answer.ok || retryAfterSeconds === null) return answer;
      return { ...answer, error: { ...answer.error, retryAfterSeconds } };
    }
    if (!response.ok) throw errorOfResponse(response, json, id);
    throw badResponse(what, response.status, z.prettifyError(result.error));
  }

  /**
   * Sends a decision for the wait `view` shows: the event names that wait (`view.wait`), so if
   * the session has moved on by the time it arrives (another tab or person answered), it is
   * refused (`wait_closed`) or, the same decision again, answered as a harmless repeat
   * (`repeated: true`) — never applied to the next wait. Options as `send()`.
   *
   * @example
   * const { view } = await client.get(id);
   * const result = await client.answer(view, { type: 'user_rejected_next_step', reason: 'Not now.' });
   * if (!result.ok && result.error.code === 'wait_closed') console.log('someone answered first; the session shows', result.view.state);
   */
  answer(view: Pick<SessionView, 'id' | 'wait'>, event: UserEvent, options: SendRequestOptions & { wait?: true } = {}): Promise<SendAnswer> {
    return this.send(view.id, view.wait === undefined ? event : { ...event, wait: view.wait }, options);
  }

  /**
   * A page of the session's journal in seq order; `next` is the `after` of the next page.
   *
   * @example
   * const { entries } = await client.journal(id, { after: 0, limit: 100 });
   */
  async journal(id: string, options: { after?: number; limit?: number } = {}): Promise<{ entries: JournalEntry[]; next: number | null }> {
    const query = new URLSearchParams();
    if (options.after !== undefined) query.set('after', String(options.after));
    if (options.limit !== undefined) query.set('limit', String(options.limit));
    const suffix = query.size ? `?${query}` : '';
    return this.checked(JournalResponse, 'GET /sessions/{id}/journal', {
      method: 'GET',
      path: `/sessions/${encodeURIComponent(id)}/journal${suffix}`,
      sessionId: id,
    });
  }

  /**
   * A new session that starts from this one's journal up to `atSeq` (default: all of it).
   *
   * @example
   * const { view } = await client.fork(id, { atSeq: 4 });
   */
  async fork(id: string, options: z.input<typeof ForkBody> = {}): Promise<ViewAnswer> {
    const body = ForkBody.parse(options);
    return this.viewAnswer('POST /sessions/{id}/fork', { method: 'POST', path: `/sessions/${encodeURIComponent(id)}/fork`, body, sessionId: id });
  }

  /**
   * A short-lived ticket that opens this one session's stream without the token, for an
   * EventSource (which cannot send headers): `new EventSource(client.streamUrl(id, { ticket }))`.
   *
   * @example
   * const { ticket } = await client.streamTicket(id);
   * const source = new EventSource(client.streamUrl(id, { ticket }));
   */
  async streamTicket(id: string): Promise<StreamTicket> {
    return this.checked(StreamTicketResponse, 'POST /sessions/{id}/stream-tickets', {
      method: 'POST',
      path: `/sessions/${encodeURIComponent(id)}/stream-tickets`,
      body: {},
      sessionId: id,
    });
  }

  /**
   * The address of a session's stream, with a ticket (for an EventSource) or `after` a seq.
   *
   * @example
   * const url = client.streamUrl(id, { ticket });
   */
  streamUrl(id: string, options: { ticket?: string; after?: number } = {}): string {
    const query = new URLSearchParams();
    if (options.ticket !== undefined) query.set('ticket', options.ticket);
    if (options.after !== undefined) query.set('after', String(options.after));
    return `${this.base}/sessions/${encodeURIComponent(id)}/stream${query.size ? `?${query}` : ''}`;
  }

  /**
   * The session's Server-Sent Events as an async iterable over fetch (so with the bearer
   * header): `hello`, journal `entry`s, live `session` events, then `done`, where it ends.
   * A dropped connection is reopened with Last-Event-ID after a backoff, so nothing is
   * missed; `signal` ends it. Unknown live event types are skipped (a newer server's).
   *
   * @example
   * const stop = new AbortController();
   * for await (const message of client.stream(id, { signal: stop.signal })) {
   *   if (message.type === 'session' && message.event.type === 'artifact_delta') draft[message.event.tag] += message.event.delta;
   * }
   */
  stream(id: string, options: StreamOptions = {}): AsyncIterableIterator<StreamMessage> {
    return streamSession({
      url: (after) => this.streamUrl(id, after !== undefined ? { after } : {}),
      open: async (url, headers, signal) => {
        try {
          return await this.fetcher(url, { method: 'GET', headers: { ...(await this.headers()), ...headers }, signal });
        } catch (error) {
          if (signal.aborted) throw error;
          throw networkError(url, error);
        }
      },
      failure: async (response) => errorOfResponse(response, await response.json().catch(() => undefined), id),
      reconnect: { ...this.options.reconnect, ...options.reconnect },
      ...options,
    });
  }

  private async headers(): Promise<Record<string, string>> {
    const token = typeof this.options.token === 'function' ? await this.options.token() : this.options.token;
    return {
      ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}),
      ...(this.options.user !== undefined ? { 'x-steward-user': this.options.user } : {}),
    };
  }

  private async request(call: Call): Promise<{ response: Response; json: unknown }> {
    const url = `${this.base}${call.path}`;
    const headers: Record<string, string> = { accept: 'application/json', ...(await this.headers()), ...call.headers };
    if (call.body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    try {
      response = await this.fetcher(url, {
        method: call.method,
        headers,
        ...(call.body !== undefined ? { body: JSON.stringify(call.body) } : {}),
        ...(call.signal ? { signal: call.signal } : {}),
      });
    } catch (error) {
      if (call.signal?.aborted) throw error;
      throw networkError(url, error);
    }
    const text = await response.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { response, json };
  }

  /**
   * A view answer: the schema checks the fields a client branches on (SessionViewSchema is
   * loose), the rest is the server's SessionView as it serialized it.
   */
  private async viewAnswer(what: string, call: Call): Promise<ViewAnswer> {
    return (await this.checked(ViewResponse, what, call)) as unknown as ViewAnswer;
  }

  /** A request whose 2xx answer must match `schema`; any other answer is the typed error of its body. */
  private async checked<S extends z.ZodType>(schema: S, what: string, call: Call): Promise<z.output<S>> {
    const { response, json } = await this.request(call);
    if (!response.ok) throw errorOfResponse(response, json, call.sessionId);
    const parsed = schema.safeParse(json);
    if (!parsed.success) throw badResponse(what, response.status, z.prettifyError(parsed.error));
    return parsed.data;
  }
}
