/**
 * PostgreSQL figures of `npm run bench`, beside SQLite's: persist per event
 * (PostgresStore.append of one entry + the mid-session snapshot), resume (resumeSession of
 * a session with a 1,000-entry journal), pause+resume on a durable PostgresStore (the
 * scenario's sessions, as the steward-sqlite mode runs them), and throughput: sessions of
 * the tiny package to done per second through HTTP with 1, 2 and 4 `steward serve`
 * processes on one database (demo model: scripted, no delay), on this machine's cores.
 *
 * The server is a throwaway cluster started with test/support/postgres.ts (fsync on, so the
 * figures are those of a durable commit), or STEWARD_TEST_PG; without either the section is
 * skipped with one line that says why.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { Session, SessionView } from '../src/index.js';
import type { JournalEntry } from '../src/store.js';
import { nextEvent } from '../test/serve/http.js';
import { PostgresStore } from '../src/store/postgres-store.js';
import type { FakeModel } from './fake-model.js';
import { answerText, BURSTS, FIRST_INPUT } from './scenario.js';
import { expectState, runStewardSession, StewardHarness } from './steward.js';
import { median, ModeSamples, summarize, timeEach, type Summary } from './stats.js';

export interface PostgresFigures {
  append: Summary;
  resumeLong: Summary;
  journalEntries: number;
  pauseResume: number;
  pause: number;
  resume: number;
  sessions: number;
  throughput: Array<{ servers: number; sessions: number; seconds: number; perSecond: number }>;
  cores: number;
  /** Load average when the throughput runs ended (the machine may be shared). */
  load: number;
}

const root = fileURLToPath(new URL('..', import.meta.url));
const STEWARD_SRC = fileURLToPath(new URL('../test/support/steward-src.mjs', import.meta.url));

/** Runs the section; null (and a printed reason) when no PostgreSQL server can be had. */
export async function postgresFigures(options: {
  model: FakeModel;
  iterations: number;
  journalEntries: number;
  sessions: number;
  throughputSessions: number;
  progress: (message: string) => void;
}): Promise<PostgresFigures | null> {
  const { postgresUnavailable, startPostgres } = await import('../test/support/postgres.js');
  if (postgresUnavailable) {
    process.stdout.write(`\nPostgreSQL: skipped — ${postgresUnavailable}\n`);
    return null;
  }
  options.progress('PostgreSQL: starting a throwaway cluster (fsync on)');
  const server = await startPostgres({ durable: true });
  try {
    const url = await server.createDatabase();
    const store = new PostgresStore(url);
    try {
      const h = new StewardHarness(options.model, 'postgres', store);
      const n = options.iterations;
      const warm = Math.max(5, Math.floor(n / 10));

      options.progress('PostgreSQL: persist cost per event');
      const mid = await toWait(h, 'pg_persist_mid', 2);
      const snapshot = mid.persisted();
      const actorEntry = (await store.journal('pg_persist_mid')).findLast((e) => e.kind === 'actor')!;
      const entry = { kind: actorEntry.kind, type: actorEntry.type, payload: actorEntry.payload, state: actorEntry.state };
      mid.stop();
      await store.create({ id: 'pg_append', packageId: 'bench', snapshot, entry: { ...entry, kind: 'created', type: 'created' } });
      let revision = 1;
      const append = summarize(
        await timeEach(n, warm, async () => {
          revision = await store.append({ id: 'pg_append', expectedRevision: revision, entries: [entry], snapshot: snapshot });
        }),
      );

      options.progress(`PostgreSQL: resume with a ${options.journalEntries}-entry journal`);
      const long = await toWait(h, 'pg_resume_long', BURSTS);
      const longSnapshot = long.persisted();
      const real: JournalEntry[] = await store.journal('pg_resume_long');
      const actors = real.filter((e) => e.kind === 'actor');
      let rev = long.revision!;
      long.stop();
      const padding = Array.from({ length: options.journalEntries - real.length }, (_, i) => actors[i % actors.length]!).map((e) => ({
        kind: e.kind,
        type: e.type,
        payload: e.payload,
        state: e.state,
      }));
      for (let i = 0; i < padding.length; i += 100)
        rev = await store.append({ id: 'pg_resume_long', expectedRevision: rev, entries: padding.slice(i, i + 100), snapshot: longSnapshot });
      const journalEntries = (await store.journal('pg_resume_long')).length;
      let last: Session | undefined;
      const resumeLong = summarize(
        await timeEach(n, warm, async () => {
          last = await h.runtime.resumeSession('pg_resume_long');
        }),
      );
      if (last?.view().state !== 'waiting_user.intake') throw new Error(`PostgreSQL: resumed in ${last?.view().state}`);
      last.stop();

      options.progress(`PostgreSQL: pause+resume durable, ${options.sessions} scenario sessions`);
      const samples = new ModeSamples();
      for (let i = 0; i < options.sessions; i++) {
        if (i % 10 === 0) h.renew();
        samples.add(await runStewardSession(h, `pg_${i}`, { checkJournal: i % 10 === 0 }));
      }

      const throughput: PostgresFigures['throughput'] = [];
      for (const servers of [1, 2, 4]) {
        options.progress(`PostgreSQL: throughput with ${servers} serve process(es), ${options.throughputSessions} sessions`);
        throughput.push(await measureThroughput(await server.createDatabase(), servers, options.throughputSessions));
      }
      return {
        append,
        resumeLong,
        journalEntries,
        pauseResume: median(samples.pauseResume),
        pause: median(samples.pause),
        resume: median(samples.resume),
        sessions: samples.sessions,
        throughput,
        cores: cpus().length,
        load: loadavg()[0]!,
      };
    } finally {
      await store.close();
    }
  } finally {
    await server.stop();
  }
}

/** The table lines, SQLite's figure beside each PostgreSQL one (µs). */
export function formatPostgres(pg: PostgresFigures, sqlite: { append: number; resumeLong: number; pauseResume: number }): string {
  const us = (ms: number) => `${(ms * 1000).toFixed(0).padStart(9)} µs`;
  const row = (label: string, p: number, s: number) => `${label.padEnd(44)}${us(p)}   SQLite ${us(s)}   ×${(p / s).toFixed(1)}`;
  const lines = [
    '',
    `PostgreSQL (throwaway local cluster, fsync on, loopback TCP) beside SQLite (temp file, WAL)`,
    row('  persist per event (append + snapshot)', pg.append.median, sqlite.append),
    row(`  resume, ${pg.journalEntries}-entry journal`, pg.resumeLong.median, sqlite.resumeLong),
    row(`  pause+resume, durable (${pg.sessions} sessions)`, pg.pauseResume, sqlite.pauseResume),
    `    of which pause ${us(pg.pause).trim()}, resume ${us(pg.resume).trim()}`,
    `Throughput: tiny-package sessions to done per second over HTTP, demo model (no delay), ${pg.cores} cores shared by servers, PostgreSQL and the load driver (load average ${pg.load.toFixed(1)})`,
    ...pg.throughput.map(
      (t) =>
        `  ${t.servers} serve process${t.servers > 1 ? 'es' : ''}:`.padEnd(24) +
        `${t.perSecond.toFixed(1).padStart(6)} sessions/s  (${t.sessions} sessions in ${t.seconds.toFixed(1)} s)`,
    ),
  ];
  return `${lines.join('\n')}\n`;
}

async function toWait(h: StewardHarness, id: string, waits: number): Promise<Session> {
  h.model.begin();
  const session = await h.open(id);
  expectState('postgres bench', await session.send({ type: 'user_submitted_input', text: FIRST_INPUT }), 'waiting_user.intake');
  for (let c = 1; c < waits; c++)
    expectState('postgres bench', await session.send({ type: 'user_submitted_input', text: answerText(c) }), 'waiting_user.intake');
  return session;
}

/** `servers` serve processes (from the sources) on `db`; `sessions` tiny sessions driven to done round-robin, 8 at a time per server. */
async function measureThroughput(db: string, servers: number, sessions: number): Promise<PostgresFigures['throughput'][number]> {
  const children: ChildProcess[] = [];
  try {
    const urls = await Promise.all(Array.from({ length: servers }, () => startServer(db, children)));
    let turn = 0;
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${urls[turn++ % urls.length]}${path}`, {
        method,
        ...(body ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {}),
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    let begun = 0;
    const drive = async () => {
      while (begun < sessions) {
        begun += 1;
        const created = await call('POST', '/sessions', { packageId: 'tiny' });
        if (created.status !== 201) throw new Error(`create: ${created.status} ${JSON.stringify(created.body)}`);
        let view = created.body.view;
        while (view.phase !== 'done') {
          const sent = await call('POST', `/sessions/${view.id}/events`, nextEvent(view as SessionView, 'A lighthouse keeper'));
          if (sent.status !== 200) throw new Error(`send: ${sent.status} ${JSON.stringify(sent.body)}`);
          view = sent.body.view;
        }
      }
    };
    const t0 = performance.now();
    await Promise.all(Array.from({ length: 8 * servers }, drive));
    const seconds = (performance.now() - t0) / 1000;
    return { servers, sessions, seconds, perSecond: sessions / seconds };
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.once('close', r)))));
  }
}

function startServer(db: string, children: ChildProcess[]): Promise<string> {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('OPENAI_') && !k.startsWith('STEWARD_') && !k.startsWith('npm_')) env[k] = v;
  const child = spawn(process.execPath, [STEWARD_SRC, 'serve', '--port', '0'], {
    cwd: root,
    env: { ...env, STEWARD_DB: db, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`steward serve did not start in 60 s:\n${out}\n${err}`)), 60_000);
    child.stderr!.setEncoding('utf8').on('data', (c: string) => (err += c));
    child.stdout!.setEncoding('utf8').on('data', (c: string) => {
      out += c;
      const url = /Steward serve on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1];
      if (url) {
        clearTimeout(timer);
        resolve(url);
      }
    });
    child.once('close', (code) => reject(new Error(`steward serve exited (${code}):\n${out}\n${err}`)));
  });
}
