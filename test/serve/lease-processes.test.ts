/**
 * Leases between real processes on one PostgreSQL database (a real server), with model
 * calls served by fake OpenAI servers (test/support/fake-openai-server.ts):
 * - a CLI `steward send` beside a `steward serve`, on a session that had an HTTP event
 *   before, with model calls several leases long: the CLI holds the session's lease, so the
 *   server neither takes it over nor runs it (one model call per committed result, no
 *   `conflict`), and a send to the server meanwhile gets 409 naming the CLI;
 * - a server paused (SIGSTOP) past its lease while a call is in flight, then woken
 *   (SIGCONT) after another server took the session over: it sends no model request and
 *   none of its events reaches a stream on the other server.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { PostgresStore } from '../../src/store/postgres-store.js';
import { demoResponder } from '../support/demo-replies.js';
import { startFakeOpenAI, type FakeOpenAI } from '../support/fake-openai-server.js';
import { startCli, until, type RunningCli } from '../support/cli-process.js';
import { postgresUnavailable } from '../support/postgres.js';
import { usePostgres } from '../support/use-postgres.js';
import { client, readEvents } from './http.js';

const pg = usePostgres();
// Long enough that a server starved of CPU on a busy machine still renews its own lease in time;
// the model calls below are counted in leases, so the test stays as strict.
const LEASE_MS = 5000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

async function fake(delayMs: () => number): Promise<FakeOpenAI> {
  const server = await startFakeOpenAI(demoResponder(delayMs));
  cleanups.push(() => server.close());
  return server;
}

const envOf = (model: FakeOpenAI) => ({ OPENAI_BASE_URL: model.baseURL, STEWARD_MODEL: 'fake-model', OPENAI_API_KEY: 'test-key' });

async function serve(db: string, model: FakeOpenAI): Promise<{ cli: RunningCli; url: string }> {
  const cli = startCli(['serve', '--port', '0', '--lease-ms', String(LEASE_MS), '--grace-ms', '0'], { db, env: envOf(model), timeoutMs: 120_000 });
  cleanups.push(async () => {
    cli.child.kill('SIGCONT');
    cli.child.kill('SIGKILL');
    await cli.result.catch(() => {});
  });
  const url = await until(() => /Steward serve on (http:\/\/127\.0\.0\.1:\d+)/.exec(cli.stdout)?.[1], 'a server URL', 40_000);
  return { cli, url };
}

describe.skipIf(postgresUnavailable !== null)('leases between processes on PostgreSQL', () => {
  it('`steward send` beside `steward serve`: the CLI holds the lease; one model call per committed result, no conflict, a 409 that names the CLI', async () => {
    const db = await pg.createDatabase();
    let slowMs = 0;
    const model = await fake(() => slowMs);
    const server = await serve(db, model);
    const http = client(server.url);

    // The session's first event goes through the server (it leaves a lease row behind)…
    const id: string = (await http.post('/sessions', { packageId: 'tiny' })).body.view.id;
    const first = await http.post(`/sessions/${id}/events`, { type: 'user_submitted_input', text: 'A lighthouse that remembers' });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.view.waitingReason).toBe('approve_step');

    // …then the CLI drives it, with a model call several leases long.
    slowMs = 3 * LEASE_MS;
    const cli = startCli(['send', id, 'approve', '--json'], { db, env: envOf(model), timeoutMs: 90_000 });
    cleanups.push(async () => {
      cli.child.kill('SIGKILL');
      await cli.result.catch(() => {});
    });
    await until(() => model.inFlight > 0, "the CLI's model call", 40_000);
    // Another CLI is told who runs it, and how to go on.
    const second = startCli(['send', id, 'approve'], { db, env: envOf(model), timeoutMs: 60_000 }).result;
    // Long enough for the server's takeover scan (every quarter lease) to have looked four times.
    await sleep(LEASE_MS);
    const busy = await http.post(`/sessions/${id}/events`, { type: 'user_submitted_input', text: 'me too' });
    expect(busy.status).toBe(409);
    expect(busy.body.error.code).toBe('session_running_elsewhere');
    // A model call takes seconds: the client is told to come back in one, not to poll.
    expect(busy.headers.get('retry-after')).toBe('1');
    expect(busy.body.error.message).toMatch(/is running in steward send on \S+ pid \d+\. It holds the session/);

    const refused = await second;
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      new RegExp(`^steward \\[session_running_elsewhere\\]: Session "${id}" is held by steward send on \\S+ pid \\d+: its lease runs \\d+ more seconds?`),
    );

    const sent = await cli.result;
    expect(sent.stderr).not.toContain('conflict');
    expect(sent.stderr).toBe('');
    expect(sent.code).toBe(0);
    expect(JSON.parse(sent.stdout)).toMatchObject({ id, waitingReason: 'review_artifact' });

    // The CLI gave the lease back at the wait: the server takes the next event at once.
    slowMs = 0;
    const artifact = JSON.parse(sent.stdout).artifact.id as string;
    const next = await http.post(`/sessions/${id}/events`, { type: 'user_accepted_artifact', artifactId: artifact });
    expect(next.status).toBe(200);

    const store = new PostgresStore(db);
    cleanups.push(() => store.close());
    const journal = await store.journal(id);
    expect(journal.map((e) => e.seq)).toEqual(journal.map((_, i) => i + 1));
    const results = journal.filter((e) => e.kind === 'actor').length;
    expect(model.requests.length).toBe(results);
    expect(model.unexpected).toEqual([]);
    expect(server.cli.stderr).not.toContain('took over');
  }, 120_000);

  it('a server paused past its lease (SIGSTOP, then SIGCONT) sends no model request and none of its events reaches a stream on the server that took over', async () => {
    const db = await pg.createDatabase();
    const modelA = await fake(() => LEASE_MS);
    const modelB = await fake(() => 0);
    const [a, b] = await Promise.all([serve(db, modelA), serve(db, modelB)]);
    const id: string = (await client(b.url).post('/sessions', { packageId: 'tiny' })).body.view.id;
    const sse = await readEvents(await fetch(`${b.url}/sessions/${id}/stream`));
    cleanups.push(() => sse.stop());
    await until(() => sse.events.some((e) => e.event === 'entry'), 'the stream to start');

    // A starts the first manager call; it is paused while the call is in flight.
    const sentToA = client(a.url).post(`/sessions/${id}/events`, { type: 'user_submitted_input', text: 'A lighthouse' });
    sentToA.catch(() => {});
    const store = new PostgresStore(db);
    cleanups.push(() => store.close());
    await until(() => modelA.inFlight > 0, "A's model call", 40_000);
    await until(async () => (await store.journal(id)).at(-1)?.state === 'running.manager.thinking', 'the input to be saved');
    a.cli.child.kill('SIGSTOP');

    // B takes it over once A's lease ran out, and runs it to the next wait.
    await until(() => b.cli.stderr.includes(`${id} taken over, now waiting_user.approve_step`), 'B to take the session over', 40_000).catch((error: Error) => {
      throw new Error(`${error.message}\nB: ${b.cli.stderr}`);
    });
    await until(() => sse.events.some((e) => e.event === 'session' && e.data.type === 'waiting'), "B's wait on the stream");
    const seen = sse.events.length;
    const requestsOfA = modelA.requests.length;
    expect(requestsOfA).toBe(1);

    // A wakes up: its model reply is there, its lease is not.
    a.cli.child.kill('SIGCONT');
    const answer = await sentToA;
    expect(answer.status).toBe(409);
    expect(answer.body.error.code).toBe('lease_lost');
    await until(() => a.cli.stderr.includes('lost its lease'), 'A to say it lost the lease');
    // NOTIFY is asynchronous: give anything A published time to arrive.
    await sleep(1000);
    expect(modelA.requests.length).toBe(requestsOfA);
    expect(
      sse.events
        .slice(seen)
        .filter((e) => e.event === 'session')
        .map((e) => e.data.type),
    ).toEqual([]);
    // The journal is B's alone: the interrupted call once more, then the next one.
    expect((await store.journal(id)).map((e) => e.state)).toEqual([
      'waiting_user.intake',
      'running.manager.thinking',
      'running.manager.thinking',
      'waiting_user.approve_step',
    ]);
  }, 120_000);
});
