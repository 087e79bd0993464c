/**
 * The state useSession renders, on the framework-free SessionFeed with a scripted server (an
 * injected fetch): the draft grows from `artifact_delta` per tag, starts afresh in a new
 * round, and is cleared when the artifact is published or the run ends; the status follows
 * the stream (live, reconnecting after a drop, done).
 */
import { expect, it } from 'vitest';
import { StewardClient, type FetchLike } from '../../src/client.js';
import { nextDraft, SessionFeed, type SessionState } from '../../src/client/session-feed.js';
import type { SessionStreamEvent } from '../../src/core/machines/stream-events.js';

const base = { sessionId: 's1', at: 1 };
const delta = (round: number, tag: string, text: string): SessionStreamEvent => ({ type: 'artifact_delta', ...base, round, worker: 'noter', tag, delta: text });

it('grows the draft per tag, restarts it in a new round, clears it when the artifact is published or the run ends', () => {
  let draft = null;
  for (const event of [delta(2, 'note', 'Green '), delta(2, 'title', 'Tea'), delta(2, 'note', 'tea.')]) draft = nextDraft(draft, event);
  expect(draft).toEqual({ worker: 'noter', round: 2, tags: { note: 'Green tea.', title: 'Tea' } });
  // A submit refused and written again in the next round: its deltas start from nothing.
  expect(nextDraft(draft, delta(3, 'note', 'Black'))).toEqual({ worker: 'noter', round: 3, tags: { note: 'Black' } });
  expect(nextDraft(draft, { type: 'text_delta', ...base, agent: 'worker', workerId: 'noter', burst: 1, maxBurst: 12, round: 2, text: 'x' })).toBe(draft);
  expect(nextDraft(draft, { type: 'artifact_published', ...base, artifactId: 'a1', workerId: 'noter', tags: { note: 1 }, revises: null })).toBeNull();
  expect(nextDraft(draft, { type: 'waiting', ...base, reason: 'review_artifact', state: 'waiting_user.review_artifact', wait: 3 })).toBeNull();
  expect(nextDraft(draft, { type: 'done', ...base, summary: null })).toBeNull();
  // Replaced: the whole bodies follow as new deltas of the same round, not appended to the old ones.
  const discarded = nextDraft(draft, { type: 'artifact_draft_discarded', ...base, round: 2, worker: 'noter', reason: 'replaced' });
  expect(discarded).toBeNull();
  expect(nextDraft(discarded, delta(2, 'note', 'Green tea!'))).toEqual({ worker: 'noter', round: 2, tags: { note: 'Green tea!' } });
});

const view = (state: string) => ({
  id: 's1',
  packageId: 'tiny',
  state,
  phase: state.split('.')[0],
  burst: 0,
  maxBurst: 12,
  acceptedEvents: [],
  enabledEvents: state === 'done' ? [] : ['user_accepted_artifact'],
  packageVersion: null,
  deadline: null,
  deciders: null,
});
const sse = (messages: string[]) =>
  new Response(
    new ReadableStream({
      start(controller) {
        for (const m of messages) controller.enqueue(new TextEncoder().encode(m));
        controller.close();
      },
    }),
    { status: 200, headers: { 'content-type': 'text/event-stream' } },
  );
const session = (id: number, event: SessionStreamEvent) => `event: session\nid: ${id}\ndata: ${JSON.stringify(event)}\n\n`;

it('follows a scripted stream: the draft while the worker writes, reconnecting after a drop, the view on each entry, done at the end', async () => {
  const connections: (string | null)[] = [];
  let state = 'running.worker';
  const fetcher: FetchLike = async (url, init) => {
    if (!url.includes('/stream')) return new Response(JSON.stringify({ view: view(state), revision: 1 }), { headers: { 'content-type': 'application/json' } });
    connections.push(new Headers(init.headers).get('last-event-id'));
    if (connections.length === 1)
      // Dropped after two deltas, without `done`.
      return sse(['event: hello\ndata: {"sessionId":"s1"}\n\n', session(1, delta(2, 'note', 'Green ')), session(2, delta(2, 'note', 'tea.'))]);
    state = 'done';
    return sse([
      'event: hello\ndata: {"sessionId":"s1"}\n\n',
      // A newer server's live event type: skipped.
      `event: session\nid: 3\ndata: ${JSON.stringify({ type: 'future_event', ...base })}\n\n`,
      `event: entry\nid: 4\ndata: ${JSON.stringify({ sessionId: 's1', seq: 4, at: 'x', kind: 'actor', type: 'done', payload: null, state: 'done' })}\n\n`,
      session(5, { type: 'done', ...base, summary: null }),
      'event: done\ndata: {}\n\n',
    ]);
  };
  const feed = new SessionFeed(new StewardClient({ baseUrl: 'http://server', fetch: fetcher, reconnect: { initialDelayMs: 1 } }), 's1');
  const seen: SessionState[] = [];
  feed.subscribe(() => seen.push(feed.snapshot()));
  feed.start();
  await new Promise<void>((resolve) => feed.subscribe(() => feed.snapshot().status === 'done' && resolve()));
  feed.stop();

  expect(connections).toEqual([null, '2']);
  expect(seen.map((s) => s.draft?.tags.note ?? null)).toContain('Green tea.');
  expect(seen.some((s) => s.status === 'reconnecting' && s.draft?.tags.note === 'Green tea.')).toBe(true);
  const end = feed.snapshot();
  expect(end).toMatchObject({ status: 'done', draft: null, enabledEvents: [], error: null, view: { state: 'done' } });
  expect(end.events.map((e) => e.type)).toEqual(['artifact_delta', 'artifact_delta', 'done']);
});

it('after an asynchronous send (202) reads the view again before offering anything: the wait just answered is not offered twice', async () => {
  let state = 'waiting_user.review_artifact';
  const fetcher: FetchLike = async (url, init) => {
    if (url.includes('/stream')) return sse(['event: hello\ndata: {"sessionId":"s1"}\n\n']);
    if (init.method === 'POST') {
      expect(new Headers(init.headers).get('prefer')).toBe('respond-async');
      state = 'running.worker';
      return new Response(JSON.stringify({ accepted: true, sessionId: 's1', revision: 2 }), { status: 202, headers: { 'content-type': 'application/json' } });
    }
    return new Response(JSON.stringify({ view: view(state), revision: 1 }), { headers: { 'content-type': 'application/json' } });
  };
  const feed = new SessionFeed(new StewardClient({ baseUrl: 'http://server', fetch: fetcher, reconnect: { initialDelayMs: 60_000 } }), 's1');
  feed.start();
  await new Promise<void>((resolve) => feed.subscribe(() => feed.snapshot().enabledEvents.length > 0 && resolve()));
  const answer = await feed.send({ type: 'user_accepted_artifact', artifactId: 'a1' }, { wait: false });
  expect(answer).toMatchObject({ ok: true, accepted: true });
  expect(feed.snapshot()).toMatchObject({ view: { state: 'running.worker' }, enabledEvents: [] });
  feed.stop();
});

it('a send names the wait the feed shows (the decision is for what the person saw), unless the event names one itself', async () => {
  const bodies: unknown[] = [];
  const fetcher: FetchLike = async (url, init) => {
    if (url.includes('/stream')) return sse(['event: hello\ndata: {"sessionId":"s1"}\n\n']);
    if (init.method === 'POST') {
      bodies.push(JSON.parse(String(init.body)));
      return new Response(JSON.stringify({ ok: true, view: { ...view('waiting_user.review_artifact'), wait: 8 }, revision: 3 }), {
        headers: { 'content-type': 'application/json' },
      });
    }
    return new Response(JSON.stringify({ view: { ...view('waiting_user.review_artifact'), wait: 7 }, revision: 2 }), {
      headers: { 'content-type': 'application/json' },
    });
  };
  const feed = new SessionFeed(new StewardClient({ baseUrl: 'http://server', fetch: fetcher, reconnect: { initialDelayMs: 60_000 } }), 's1');
  feed.start();
  await new Promise<void>((resolve) => feed.subscribe(() => feed.snapshot().view?.wait === 7 && resolve()));
  await feed.send({ type: 'user_accepted_artifact', artifactId: 'a1' });
  await feed.send({ type: 'user_accepted_artifact', artifactId: 'a2', wait: 5 });
  expect(bodies).toEqual([
    { type: 'user_accepted_artifact', artifactId: 'a1', wait: 7 },
    { type: 'user_accepted_artifact', artifactId: 'a2', wait: 5 },
  ]);
  feed.stop();
});
