/**
 * Several `steward serve` servers on one PostgreSQL database (a real server,
 * test/support/postgres.ts): an event stream on one server delivers the entries of a
 * session driven through another, two events racing from two servers give one success and
 * one 409, and the real `steward serve` command runs a story to done and stops on SIGTERM.
 */
import pgDriver from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { DemoModel } from '../../src/models/demo-model.js';
import type { Model } from '../../src/core/models/model.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import type { SessionView } from '../../src/core/view.js';
import { startServe, type ServeHandle } from '../../src/serve/server.js';
import { PostgresStore } from '../../src/store/postgres-store.js';
import { startCli, until } from '../support/cli-process.js';
import { postgresUnavailable, TEST_PASSWORD } from '../support/postgres.js';
import { usePostgres } from '../support/use-postgres.js';
import { client, nextEvent, readEvents } from './http.js';

const CLI_TIMEOUT = 90_000;
const pg = usePostgres();

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Model calls made by every server of a test (the demo model, counted). */
let modelCalls = 0;

/** One server as another machine would run it: its own pool, runtime and port. */
async function server(
  url: string,
  streamed: boolean[] = [],
  gate: () => Promise<void> = () => Promise.resolve(),
): Promise<{ handle: ServeHandle; http: ReturnType<typeof client>; store: PostgresStore }> {
  const store = new PostgresStore(url);
  const demo = new DemoModel();
  const model: Model = {
    label: demo.label,
    complete: (request) => {
      modelCalls += 1;
      // Whether the call streams; a streaming call gets a piece of text of its own.
      streamed.push(request.onTextDelta !== undefined);
      request.onTextDelta?.('Thinking…');
      return gate().then(() => demo.complete(request));
    },
  };
  const runtime = createRuntime({ model, store });
  const handle = await startServe({ runtime, store, port: 0, log: () => {} });
  cleanups.push(
    () => store.close(),
    () => handle.close(),
  );
  return { handle, http: client(handle.url), store };
}

describe.skipIf(postgresUnavailable !== null)('steward serve on PostgreSQL', () => {
  it('an event stream on one server delivers, at once, the entries of a session driven through another', async () => {
    const url = await pg.createDatabase();
    const [a, b] = await Promise.all([server(url), server(url)]);
    const id: string = (await a.http.post('/sessions', { packageId: 'tiny' })).body.view.id;

    const sse = await readEvents(await fetch(`${b.handle.url}/sessions/${id}/stream`));
    cleanups.push(() => sse.stop());
    await expect.poll(() => sse.events.filter((e) => e.event === 'entry').length).toBe(1);

    let view: SessionView = (await a.http.get(`/sessions/${id}`)).body.view;
    const first = nextEvent(view, 'Hello from server A');
    const sentAt = Date.now();
    view = (await a.http.post(`/sessions/${id}/events`, first)).body.view;
    await expect.poll(() => sse.events.some((e) => e.data?.type === 'user_submitted_input'), { timeout: 2000 }).toBe(true);
    // Pushed by LISTEN/NOTIFY, not found by a poll: well under a second on a loaded machine.
    expect(Date.now() - sentAt).toBeLessThan(1000);

    while (view.phase !== 'done') view = (await a.http.post(`/sessions/${id}/events`, nextEvent(view, 'Hello'))).body.view;
    await expect.poll(() => sse.events.at(-1)?.event, { timeout: 5000 }).toBe('done');
    const journal = (await b.http.get(`/sessions/${id}/journal`)).body.entries;
    expect(sse.events.filter((e) => e.event === 'entry').map((e) => e.data)).toEqual(journal);
  });

  it('a session watched nowhere sends no live events over NOTIFY; a stream opened mid-run on another server gets the run so far, in order', async () => {
    const url = await pg.createDatabase();
    // A's model calls wait for the test while `holding`: the run is under way as long as it wants.
    let holding = false;
    let letGo: (() => void) | null = null;
    const gate = () => (holding ? new Promise<void>((resolve) => (letGo = resolve)) : Promise.resolve());
    const [a, b] = await Promise.all([server(url, [], gate), server(url)]);
    const heard: Array<{ sessionId: string; event: { run?: string; n?: number; marker?: boolean } }> = [];
    const listening = new pgDriver.Client({ connectionString: url });
    await listening.connect();
    cleanups.push(() => listening.end());
    const channel = `steward_events_${a.store.schema}`;
    listening.on('notification', (message) => heard.push(JSON.parse(message.payload ?? '{}')));
    await listening.query(`LISTEN ${channel}`);
    // Everything A handed to the database before the marker is heard before it (NOTIFY keeps commit order).
    const heardAll = async () => {
      await a.store.events!.flush!();
      await listening.query('SELECT pg_notify($1, $2)', [channel, JSON.stringify({ sessionId: 'marker', event: { marker: true } })]);
      await expect.poll(() => heard.some((h) => h.event.marker)).toBe(true);
      heard.splice(
        heard.findIndex((h) => h.event.marker),
        1,
      );
    };

    const id: string = (await a.http.post('/sessions', { packageId: 'tiny' })).body.view.id;
    const first = await a.http.post(`/sessions/${id}/events`, { type: 'user_submitted_input', text: 'Hello' });
    expect(first.body.view.waitingReason).toBe('approve_step');
    await heardAll();
    expect(heard).toEqual([]);

    // The next run stops in its worker call; a stream opens on B meanwhile.
    holding = true;
    const approved = a.http.post(`/sessions/${id}/events`, { type: 'user_approved_next_step' });
    await expect.poll(() => letGo !== null).toBe(true);
    const sse = await readEvents(await fetch(`${b.handle.url}/sessions/${id}/stream`));
    cleanups.push(() => sse.stop());
    // A sends what it kept of the run (its worker round began before B watched), then the rest as it happens.
    await expect.poll(() => sse.events.some((e) => e.event === 'session' && e.data.type === 'round_started' && e.data.agent === 'worker')).toBe(true);
    holding = false;
    letGo!();
    expect(await approved).toMatchObject({ status: 200, body: { view: { waitingReason: 'review_artifact' } } });
    await expect.poll(() => sse.events.some((e) => e.event === 'session' && e.data.type === 'waiting' && e.data.reason === 'review_artifact')).toBe(true);
    await heardAll();
    const records = heard.filter((h) => h.event.run !== undefined).map((h) => h.event as { run: string; n: number });
    // One run only (the first went nowhere), from its first record, in order, none twice.
    expect(new Set(records.map((r) => r.run)).size).toBe(1);
    expect(records.map((r) => r.n)).toEqual(records.map((_, i) => i + 1));
    // B's stream shows the run's records once each, in order.
    const shown = sse.events.filter((e) => e.event === 'session').map((e) => e.id);
    expect(new Set(shown).size).toBe(shown.length);
  });

  it("a session's model calls stream while a stream on another server follows it, and not before", async () => {
    const url = await pg.createDatabase();
    const streamedOnA: boolean[] = [];
    const [a, b] = await Promise.all([server(url, streamedOnA), server(url)]);
    const id: string = (await a.http.post('/sessions', { packageId: 'tiny' })).body.view.id;
    const first = await a.http.post(`/sessions/${id}/events`, { type: 'user_submitted_input', text: 'Hello' });
    expect(first.body.view.waitingReason).toBe('approve_step');
    expect(streamedOnA.length).toBeGreaterThan(0);
    expect(streamedOnA.some((s) => s)).toBe(false);

    // B's stream says on the bus that it follows the session: A's next calls stream, and their text reaches B.
    const sse = await readEvents(await fetch(`${b.handle.url}/sessions/${id}/stream`));
    cleanups.push(() => sse.stop());
    await expect.poll(() => sse.events.some((e) => e.event === 'hello')).toBe(true);
    streamedOnA.length = 0;
    // The notice was committed before hello; A reads it from its LISTEN connection, asynchronously.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const approved = await a.http.post(`/sessions/${id}/events`, { type: 'user_approved_next_step' });
    expect(approved.status).toBe(200);
    expect(streamedOnA.length).toBeGreaterThan(0);
    expect(streamedOnA.every((s) => s)).toBe(true);
    await expect
      .poll(() => sse.events.some((e) => e.event === 'session' && e.data.type === 'text_delta' && e.data.text === 'Thinking…'), { timeout: 5000 })
      .toBe(true);
  });

  it('two events racing on one session from two servers: one is taken, the other is a 409, the journal is gapless', async () => {
    const url = await pg.createDatabase();
    const [a, b] = await Promise.all([server(url), server(url)]);
    for (let round = 0; round < 30; round++) {
      const id: string = (await a.http.post('/sessions', { packageId: 'tiny' })).body.view.id;
      modelCalls = 0;
      const [fromA, fromB] = await Promise.all([
        a.http.post(`/sessions/${id}/events`, { type: 'user_submitted_input', text: 'from A' }),
        b.http.post(`/sessions/${id}/events`, { type: 'user_submitted_input', text: 'from B' }),
      ]);
      const statuses = [fromA.status, fromB.status].sort();
      expect(statuses, JSON.stringify([fromA.body, fromB.body])).toEqual([200, 409]);
      const loser = fromA.status === 409 ? fromA : fromB;
      expect(['session_running_elsewhere', 'event_refused']).toContain(loser.body.error.code);
      // Running elsewhere: come back in a second; refused in its state: sending again changes nothing.
      expect(loser.headers.get('retry-after')).toBe(loser.body.error.code === 'session_running_elsewhere' ? '1' : null);
      // The tiny package's intake takes two manager calls, run by the winner only: the
      // lease is taken before the session is loaded, so the loser never starts a call.
      expect(modelCalls, `round ${round}: ${modelCalls} model calls`).toBe(2);

      const journal = (await a.http.get(`/sessions/${id}/journal`)).body.entries as Array<{
        seq: number;
        type: string;
        state: string;
        payload: { text?: string };
      }>;
      expect(journal.map((e) => e.seq)).toEqual(journal.map((_, i) => i + 1));
      // A refused event is journalled too, with the state unchanged: count the accepted ones.
      const inputs = journal.filter((e, i) => e.type === 'user_submitted_input' && e.state !== journal[i - 1]!.state);
      expect(inputs).toHaveLength(1);
      const winner = fromA.status === 200 ? 'from A' : 'from B';
      expect(inputs[0]!.payload.text).toBe(winner);
    }
  });

  it("answers a journal or stream position past PostgreSQL's integer range, and a NUL in an id, without a 500", async () => {
    const url = await pg.createDatabase();
    const { handle, http } = await server(url);
    const id: string = (await http.post('/sessions', { packageId: 'tiny' })).body.view.id;

    // Valid input (the schema allows any seq up to 2^53 − 1): an empty page, not a failure.
    for (const after of ['2147483648', String(Number.MAX_SAFE_INTEGER)]) {
      const page = await http.get(`/sessions/${id}/journal?after=${after}`);
      expect(page.status, JSON.stringify(page.body)).toBe(200);
      expect(page.body).toEqual({ entries: [], next: null });
    }
    // An EventSource resuming far ahead gets its stream (and waits), not a 500 it would retry forever.
    const controller = new AbortController();
    const resumed = await fetch(`${handle.url}/sessions/${id}/stream`, { headers: { 'last-event-id': '2147483648' }, signal: controller.signal });
    expect(resumed.status).toBe(200);
    const sse = await readEvents(resumed);
    cleanups.push(() => sse.stop());
    await expect.poll(() => sse.events[0]?.event).toBe('hello');
    expect(sse.events.filter((e) => e.event === 'error')).toEqual([]);
    // Past the bound of the schema: a 400 that says so (an EventSource stops on it).
    const beyond = await fetch(`${handle.url}/sessions/${id}/stream`, { headers: { 'last-event-id': '9007199254740992' } });
    expect(beyond.status).toBe(400);
    expect(((await beyond.json()) as { error: { message: string } }).error.message).toMatch(/Last-Event-ID header.*at most 9007199254740991/);

    for (const path of ['/sessions/%00', '/sessions/a%00b/journal', '/sessions/%00/stream']) {
      const refused = await http.get(path);
      expect(refused.status, path).toBe(400);
      expect(refused.body.error.message).toMatch(/U\+0000.*1 to 200 characters, none of them a control or invisible character/);
    }
    expect((await http.post('/sessions/%00/events', { type: 'user_confirmed_intake' })).status).toBe(400);
  });

  it(
    '`steward serve` with STEWARD_DB=postgres://… and STEWARD_TOKEN: a story to done, then SIGTERM stops it cleanly',
    async () => {
      const db = await pg.createDatabase();
      const token = 'cli-test-token-0123456789';
      const cli = startCli(['serve', '--port', '0'], { db, env: { STEWARD_TOKEN: token }, timeoutMs: 80_000 });
      const base = await until(() => /Steward serve on (http:\/\/127\.0\.0\.1:\d+)/.exec(cli.stdout)?.[1], 'the server URL', 30_000);
      expect(cli.stdout).toContain('bearer token required (STEWARD_TOKEN)');
      expect(cli.stdout).toMatch(/store postgres:\/\/postgres@127\.0\.0\.1:\d+\/steward_test_\w+ · model: demo model/);
      expect(cli.stdout).not.toContain(TEST_PASSWORD);

      expect((await client(base).get('/sessions')).status).toBe(401);
      const http = client(base, token);
      const health = await http.get('/healthz');
      expect(health.body).toMatchObject({ ok: true, draining: false });
      const id: string = (await http.post('/sessions', { packageId: 'short-story' })).body.view.id;
      let view: SessionView = (await http.get(`/sessions/${id}`)).body.view;
      while (view.phase !== 'done') {
        const sent = await http.post(`/sessions/${id}/events`, nextEvent(view, 'A lighthouse keeper'));
        expect(sent.status).toBe(200);
        view = sent.body.view;
      }

      const store = new PostgresStore(db);
      try {
        const journal = await store.journal(id);
        expect(journal.map((e) => e.seq)).toEqual(journal.map((_, i) => i + 1));
        expect(journal.at(-1)!.state).toBe('done');
      } finally {
        await store.close();
      }

      cli.child.kill('SIGTERM');
      const result = await cli.result;
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('SIGTERM: stopping');
      expect(result.stdout).toContain('Stopped. 0 send(s) settled.');
    },
    CLI_TIMEOUT,
  );

  it(
    '`steward serve --host 0.0.0.0` without STEWARD_TOKEN refuses to start and says why',
    async () => {
      const db = await pg.createDatabase();
      const result = await startCli(['serve', '--host', '0.0.0.0', '--port', '0'], { db }).result;
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/^steward \[user_error\]: steward serve on 0\.0\.0\.0 is reachable from other machines: set STEWARD_TOKEN/);
    },
    CLI_TIMEOUT,
  );
});
