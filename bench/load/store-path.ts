/**
 * What one send costs PostgreSQL and the server's process in the store alone, without the
 * model, HTTP or the event loop's queue: the lease and the session's read, three journal
 * writes (the last one durable, as a wait's is) and the release, for 8 sessions at once.
 * Measured both ways in the same run, alternated: as `steward serve` does it (one statement
 * to lease and read, named prepared statements) and as it did before (the lease and the read
 * as two statements, every statement sent unnamed). The database's CPU is read from /proc
 * (its backends' user + system time), so it is printed only on Linux.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { PostgresStore } from '../../src/store/postgres-store.js';
import type { Lease, StoredSession } from '../../src/store/session-store.js';

export interface StorePathFigures {
  way: 'serve' | 'two statements, unnamed';
  /** Wall time of one send's store calls, 8 sessions at once. */
  wallMs: number;
  nodeCpuUs: number;
  /** Null where /proc cannot be read. */
  pgCpuUs: number | null;
}

const SESSIONS = 8;
const SENDS = 100;
const SNAPSHOT = { context: 'x'.repeat(4000) };

/** CPU time (ms) of every PostgreSQL process on this machine, or null without /proc. */
function postgresCpuMs(): number | null {
  if (!existsSync('/proc/self/stat')) return null;
  let ticks = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (!stat.includes('(postgres)')) continue;
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // the process ended meanwhile
    }
  }
  return ticks * 10; // USER_HZ is 100 on Linux
}

async function oneSend(store: PostgresStore, id: string, serveWay: boolean, i: number): Promise<void> {
  let lease: Lease | null;
  let stored: StoredSession | undefined;
  if (serveWay) ({ lease, stored } = await store.leases.acquireAndLoad(id, 'store-path', 30_000));
  else {
    lease = await store.leases.acquireLease(id, 'store-path', 30_000);
    stored = await store.load(id);
  }
  if (!lease || !stored) throw new Error(`store-path: ${id} was not leased and read`);
  let revision = stored.revision;
  for (let j = 0; j < 3; j++) {
    const atRest = j === 2;
    revision = await store.append({
      id,
      expectedRevision: revision,
      entries: [{ kind: 'event', type: 'user_submitted_input', payload: { i, j }, state: atRest ? 'waiting.approve_step' : 'running.manager' }],
      snapshot: SNAPSHOT,
      lease,
      ...(atRest ? {} : { durable: false }),
    });
  }
  await store.leases.releaseLease(lease);
}

async function measure(url: string, serveWay: boolean): Promise<StorePathFigures> {
  const store = new PostgresStore(url, { schema: `path_${serveWay ? 'serve' : 'old'}_${Date.now().toString(36)}`, preparedStatements: serveWay });
  try {
    const ids = Array.from({ length: SESSIONS }, (_, k) => `path-${k}`);
    for (const id of ids)
      await store.create({ id, packageId: null, snapshot: SNAPSHOT, entry: { kind: 'created', type: 'session.created', payload: {}, state: 'idle' } });
    await Promise.all(ids.map((id) => oneSend(store, id, serveWay, -1))); // warm: connections open, statements prepared
    const cpu = process.cpuUsage();
    const pgBefore = postgresCpuMs();
    const start = performance.now();
    await Promise.all(
      ids.map(async (id) => {
        for (let i = 0; i < SENDS; i++) await oneSend(store, id, serveWay, i);
      }),
    );
    const wall = performance.now() - start;
    const used = process.cpuUsage(cpu);
    const pgAfter = postgresCpuMs();
    const sends = SESSIONS * SENDS;
    return {
      way: serveWay ? 'serve' : 'two statements, unnamed',
      wallMs: wall / SENDS,
      nodeCpuUs: (used.user + used.system) / sends,
      pgCpuUs: pgBefore === null || pgAfter === null ? null : ((pgAfter - pgBefore) * 1000) / sends,
    };
  } finally {
    await store.close();
  }
}

/** Both ways twice, alternated: on a shared machine the pair of each shows the spread. */
export async function storePath(url: string): Promise<StorePathFigures[]> {
  const figures: StorePathFigures[] = [];
  for (let round = 0; round < 2; round++) for (const serveWay of [false, true]) figures.push(await measure(url, serveWay));
  return figures;
}

export function printStorePath(figures: readonly StorePathFigures[], say: (line: string) => void): void {
  say('');
  say(`PostgreSQL store path of one send (lease + read, 3 journal writes, release; ${SESSIONS} sessions at once), alternated runs`);
  say(`| way | wall ms / send (${SESSIONS} at once) | server process CPU µs / send | PostgreSQL CPU µs / send |`);
  say('|---|---|---|---|');
  for (const f of figures)
    say(`| ${f.way} | ${f.wallMs.toFixed(1)} | ${f.nodeCpuUs.toFixed(0)} | ${f.pgCpuUs === null ? 'n/a (no /proc)' : f.pgCpuUs.toFixed(0)} |`);
}
