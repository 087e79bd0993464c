/**
 * The big one: three real `steward serve` processes on one PostgreSQL database (a real
 * server), each with its own fake OpenAI server (test/support/fake-openai-server.ts)
 * answering like the demo model, a little slowly, so calls are in flight. A small load
 * script on loopback drives 60 sessions of the tiny package to done through round-robin
 * requests; one server is SIGKILLed mid-run while it has model calls in flight. Then: all 60
 * are done, each journal is gapless, no artifact or blackboard version is duplicated,
 * every transcript a fake received is valid (each tool call has its result), and the
 * takeover time is printed.
 */
import { describe, expect, it } from 'vitest';
import type { SessionView } from '../../src/core/view.js';
import { PostgresStore } from '../../src/store/postgres-store.js';
import { demoResponder, transcriptProblems } from '../support/demo-replies.js';
import { startFakeOpenAI, type FakeOpenAI } from '../support/fake-openai-server.js';
import { startCli, until, type RunningCli } from '../support/cli-process.js';
import { postgresUnavailable } from '../support/postgres.js';
import { usePostgres } from '../support/use-postgres.js';
import { nextEvent } from './http.js';

const SESSIONS = 60;
const CONCURRENCY = 20;
const LEASE_MS = 1500;
const DEADLINE_MS = 100_000;

const pg = usePostgres();

interface Server {
  cli: RunningCli;
  fake: FakeOpenAI;
  url: string;
  alive: boolean;
}

describe.skipIf(postgresUnavailable !== null)('three `steward serve` on one database', () => {
  it('60 sessions to done through round-robin requests while one server is SIGKILLed mid-run', async () => {
    const db = await pg.createDatabase();
    const servers: Server[] = [];
    const fakes: FakeOpenAI[] = [];
    const started = Date.now();
    let watch: PostgresStore | undefined;
    try {
      for (let i = 0; i < 3; i++) {
        const fake = await startFakeOpenAI(demoResponder(() => 20 + Math.floor(Math.random() * 60)));
        const cli = startCli(['serve', '--port', '0', '--lease-ms', String(LEASE_MS), '--grace-ms', '0'], {
          db,
          env: { OPENAI_BASE_URL: fake.baseURL, STEWARD_MODEL: 'fake-model', OPENAI_API_KEY: 'test-key' },
          timeoutMs: DEADLINE_MS + 30_000,
        });
        fakes.push(fake);
        servers.push({ cli, fake, url: '', alive: true });
      }
      for (const s of servers) s.url = await until(() => /Steward serve on (http:\/\/127\.0\.0\.1:\d+)/.exec(s.cli.stdout)?.[1], 'a server URL', 30_000);

      // Round-robin over the servers; a refused connection (the dead one) goes to the next.
      let turn = 0;
      const request = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> => {
        for (let attempt = 0; ; attempt++) {
          const server = servers[turn++ % servers.length]!;
          try {
            const res = await fetch(`${server.url}${path}`, {
              method,
              ...(body !== undefined ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {}),
              signal: AbortSignal.timeout(30_000),
            });
            return { status: res.status, body: await res.json() };
          } catch (error) {
            // The connection broke (the server died mid-request): the caller reads the state again.
            if (method === 'POST' && path !== '/sessions') return { status: 0, body: { error: String(error) } };
            if (attempt > 10) throw error;
          }
        }
      };

      watch = new PostgresStore(db);
      const ids: string[] = [];
      let begun = 0;
      let sends = 0;
      const drive = async (): Promise<void> => {
        while (begun < SESSIONS) {
          begun += 1;
          const created = await request('POST', '/sessions', { packageId: 'tiny' });
          expect(created.status).toBe(201);
          const id: string = created.body.view.id;
          ids.push(id);
          for (;;) {
            if (Date.now() - started > DEADLINE_MS) throw new Error(`session ${id} not done in time`);
            const got = await request('GET', `/sessions/${id}`);
            const view: SessionView = got.body.view;
            // A server's live view may be ahead of what it has written: done counts once the
            // journal says so (a server killed before its last writes leaves the session waiting
            // in the store, where the next read, on a survivor, finds it).
            if (view.phase === 'done') {
              if ((await watch!.journal(id)).at(-1)?.state === 'done') break;
              await new Promise((r) => setTimeout(r, 50));
              continue;
            }
            if (view.phase === 'running') {
              await new Promise((r) => setTimeout(r, 50));
              continue;
            }
            sends += 1;
            const sent = await request('POST', `/sessions/${id}/events`, nextEvent(view, `A story about lighthouse ${id}`));
            // 200: on to the next wait; 409 (it runs elsewhere, or a race), 503, or a broken
            // connection: read the state again and decide from there.
            if (sent.status !== 200) await new Promise((r) => setTimeout(r, 50));
          }
        }
      };

      // Kill server 0 once the run is well under way and it has model calls in flight.
      const victim = servers[0]!;
      const killing = (async () => {
        await until(() => ids.length >= SESSIONS / 3 && victim.fake.inFlight >= 2, 'server 0 to be busy with model calls', DEADLINE_MS);
        victim.cli.child.kill('SIGKILL');
        victim.alive = false;
        const killedAt = Date.now();
        const inFlightAtKill = victim.fake.inFlight;
        servers.splice(0, 1);
        const firstTakeover = await until(() => servers.some((s) => s.cli.stderr.includes('took over')) && Date.now(), 'a survivor to take over', 30_000);
        return { killedAt, inFlightAtKill, takeoverMs: firstTakeover - killedAt };
      })();

      await Promise.all(Array.from({ length: CONCURRENCY }, drive));
      const kill = await killing;
      expect((await victim.cli.result).signal).toBe('SIGKILL');
      const elapsed = Date.now() - started;

      // Every session done, its journal gapless, nothing written twice.
      const store = new PostgresStore(db);
      try {
        expect(ids).toHaveLength(SESSIONS);
        for (const id of ids) {
          const journal = await store.journal(id);
          expect(
            journal.map((e) => e.seq),
            id,
          ).toEqual(journal.map((_, i) => i + 1));
          expect(journal.at(-1)!.state, id).toBe('done');
          const { context } = (
            (await store.load(id))!.snapshot as {
              snapshot: { context: { artifacts: Array<{ id: string; workerId: string }>; blackboard: Record<string, unknown[]> } };
            }
          ).snapshot;
          expect(context.artifacts.map((a) => a.workerId).sort(), id).toEqual(['echo', 'summarize']);
          expect(new Set(context.artifacts.map((a) => a.id)).size).toBe(2);
          for (const tag of ['note', 'summary']) expect(context.blackboard[tag], `${id} ${tag}`).toHaveLength(1);
        }
      } finally {
        await store.close();
      }

      // Every transcript a fake received is valid.
      for (const fake of fakes) {
        expect(fake.unexpected).toEqual([]);
        for (const body of fake.requests) expect(transcriptProblems(body)).toEqual([]);
      }
      const takeovers = servers.map((s) => (s.cli.stderr.match(/took over/g) ?? []).length).reduce((a, b) => a + b, 0);
      expect(takeovers).toBeGreaterThanOrEqual(1);
      const calls = fakes.reduce((n, f) => n + f.requests.length, 0);
      // A tiny session takes 8 model calls. What the dead server had started runs again at
      // most once: by a takeover (a running session), or, when it died before the event that
      // started the call was committed, when the client sends that event again. Never more.
      const lost = servers.map((s) => (s.cli.stderr.match(/lost its lease/g) ?? []).length).reduce((a, b) => a + b, 0);
      expect(calls).toBeGreaterThanOrEqual(8 * SESSIONS);
      expect(calls - 8 * SESSIONS).toBeLessThanOrEqual(takeovers + kill.inFlightAtKill);
      console.log(
        `three servers: ${SESSIONS} sessions done in ${(elapsed / 1000).toFixed(1)} s (${sends} sends, ${calls} model calls); ` +
          `SIGKILL with ${kill.inFlightAtKill} calls in flight; first takeover ${kill.takeoverMs} ms after it (lease ${LEASE_MS} ms); ${takeovers} sessions taken over; ` +
          `${calls - 8 * SESSIONS} calls ran again; ${lost} leases lost by survivors.`,
      );
    } finally {
      for (const s of servers) if (s.alive) s.cli.child.kill('SIGTERM');
      await Promise.all(servers.map((s) => s.cli.result.catch(() => {})));
      await Promise.all(fakes.map((f) => f.close()));
      await watch?.close();
    }
  }, 180_000);
});
