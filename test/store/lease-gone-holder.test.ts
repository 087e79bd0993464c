/**
 * A lease whose holder is known to be gone, on PostgresStore (a real server): every grant
 * records its process with its token; `acquireLease(…, { goneToken })` takes an unexpired
 * lease only while it is still that grant, in the guarded upsert, and the gone holder's
 * fenced writes then commit nothing; a grant that records no process (an older Steward)
 * leaves no process to be judged by; and a runtime's resumeSession takes a gone holder's
 * lease at once, never a live one's.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LeaseLostError } from '../../src/core/errors.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import { thisProcess } from '../../src/store/holder-process.js';
import { PostgresStore } from '../../src/store/postgres-store.js';
import { postgresUnavailable } from '../support/postgres.js';
import { hanging } from '../support/running-elsewhere.js';
import { usePostgres } from '../support/use-postgres.js';
import { entry } from './session-store.spec.js';

const server = usePostgres();
let url = '';
const open: PostgresStore[] = [];
beforeAll(async () => {
  if (postgresUnavailable) return;
  url = await server.createDatabase();
}, 60_000);
afterAll(async () => {
  await Promise.all(open.map((s) => s.close()));
}, 60_000);

const connect = (schema: string) => {
  const store = new PostgresStore(url, { schema });
  open.push(store);
  return store;
};
const freshSchema = () => `t_${randomBytes(5).toString('hex')}`;
const created = (state = 'idle') => ({ kind: 'created', type: 'session.created', payload: {}, state }) as const;
const impossiblePid = () => Number(readFileSync('/proc/sys/kernel/pid_max', 'utf8').trim()) + 1;

/** Runs SQL on the database as another client would. */
async function sql(text: string, params: unknown[] = []): Promise<unknown[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, params)).rows;
  } finally {
    await client.end();
  }
}

describe.skipIf(postgresUnavailable !== null || process.platform !== 'linux')('a lease whose holder is gone', () => {
  it('every grant records its process with its token; a grant that records none (an older Steward) leaves none to judge by', async () => {
    const schema = freshSchema();
    const [a, b] = [connect(schema), connect(schema)];
    await a.create({ id: 's', packageId: null, snapshot: {}, entry: created() });
    await a.leases.acquireLease('s', 'A', 60_000);
    expect(await b.leases.holder('s')).toEqual({ owner: 'A', expiresInMs: expect.any(Number), token: 1, process: thisProcess() });
    const refused = await b.leases.acquireAndLoad('s', 'B', 60_000);
    expect(refused.holder).toEqual({ owner: 'A', expiresInMs: expect.any(Number), token: 1, process: thisProcess() });

    // An older Steward, still running beside the migrated schema, grants without a process.
    await sql(`UPDATE "${schema}".leases SET owner = 'old', token = token + 1, expires_at = now() + interval '1 minute' WHERE session_id = 's'`);
    expect(await b.leases.holder('s')).toMatchObject({ owner: 'old', token: 2, process: null });
  });

  it('goneToken: an unexpired lease is taken only while it is that grant; the gone grant then commits nothing', async () => {
    const schema = freshSchema();
    const [a, b] = [connect(schema), connect(schema)];
    await a.create({ id: 's', packageId: null, snapshot: {}, entry: created() });
    const gone = (await a.leases.acquireLease('s', 'A', 60_000))!;
    // Another grant's token: not that one.
    expect(await b.leases.acquireLease('s', 'B', 60_000, { goneToken: gone.token + 1 })).toBeNull();
    const taken = await b.leases.acquireLease('s', 'B', 60_000, { goneToken: gone.token });
    expect(taken).toEqual({ sessionId: 's', owner: 'B', token: gone.token + 1 });
    // Once taken, the same knowledge takes nothing more: the grant moved on.
    expect(await a.leases.acquireLease('s', 'C', 60_000, { goneToken: gone.token })).toBeNull();
    await expect(a.append({ id: 's', expectedRevision: 1, entries: [entry('late', 'running')], snapshot: {}, lease: gone })).rejects.toThrow(LeaseLostError);
    expect(await a.leases.renewLease(gone, 60_000)).toBe(false);
    await b.append({ id: 's', expectedRevision: 1, entries: [entry('go', 'running')], snapshot: {}, lease: taken! });
  });

  it('resumeSession takes the lease of a holder of this machine whose process is gone at once, and not that of a live one', async () => {
    const schema = freshSchema();
    const store = connect(schema);
    const runtime = createRuntime({ model: hanging, store, leaseOwner: 'resumer', leaseMs: 600_000 });
    const session = await runtime.createSession({ packageId: 'tiny' });
    await session.close();
    const holdAs = (process: object) =>
      sql(
        `INSERT INTO "${schema}".leases (session_id, owner, token, expires_at, process)
         VALUES ($1, 'killed', 7, now() + interval '10 minutes', $2::jsonb || '{"token": 7}')
         ON CONFLICT (session_id) DO UPDATE SET owner = 'killed', token = 7, expires_at = EXCLUDED.expires_at, process = EXCLUDED.process`,
        [session.id, JSON.stringify(process)],
      );

    // Alive (this very process, as another runtime in it would be): held.
    await holdAs(thisProcess()!);
    await expect(runtime.resumeSession(session.id)).rejects.toMatchObject({ code: 'session_running_elsewhere', holder: 'killed' });

    // Gone: taken at once, ten minutes early.
    await holdAs({ ...thisProcess()!, pid: impossiblePid(), startTicks: 1 });
    const resumed = await runtime.resumeSession(session.id);
    // The next grant on that row (let go again since: the session waits).
    expect(await sql(`SELECT owner, token FROM "${schema}".leases WHERE session_id = $1`, [session.id])).toEqual([{ owner: 'resumer', token: '8' }]);
    await resumed.close();
  });
});
