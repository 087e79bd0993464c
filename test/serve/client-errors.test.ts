/**
 * What a client is told of a store fault, on every route (REST, AG-UI, A2A): a code and a
 * message that names no database file, host or database, while the server's log has the
 * whole error. With a real PostgreSQL stopped under a running server, and with an SQLite file
 * error (the store's own fault mapping of a malformed file).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DemoModel } from '../../src/models/demo-model.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import { startServe, type ServeHandle } from '../../src/serve/server.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { storeFault } from '../../src/store/sqlite-faults.js';
import type { SessionStore } from '../../src/store/session-store.js';
import { postgresUnavailable, startPostgres } from '../support/postgres.js';
import { useTempDir } from '../support/temp.js';
import { client } from './http.js';
import { agUiAgent, runError } from '../protocols/ag-ui-client.js';
import { a2aClient, request } from '../protocols/a2a-client.js';

const tmp = useTempDir('steward-client-errors-');
const open: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close();
});

async function serve(store: SessionStore): Promise<{ server: ServeHandle; logs: string[] }> {
  const runtime = createRuntime({ model: new DemoModel(), store });
  const logs: string[] = [];
  const server = await startServe({ runtime, store, port: 0, log: (m) => logs.push(m) });
  open.push(() => server.close());
  return { server, logs };
}

/** What each route tells a client while the store fails: REST's error body, AG-UI's RUN_ERROR, A2A's JSON-RPC error. */
async function answersOfEveryRoute(server: ServeHandle, id: string) {
  const http = client(server.url);
  const rest = [await http.get('/sessions'), await http.get(`/sessions/${id}`), await http.post(`/sessions/${id}/events`, { type: 'user_confirmed_intake' })];
  const agUi = runError(await agUiAgent(`${server.url}/ag-ui/tiny`, 'a-new-thread').run());
  const a2a = await (await a2aClient(server.url, 'tiny')).sendMessage(request({ text: 'A note.' }, { contextId: 'a-new-context' })).then(
    () => undefined,
    (error: Error) => error,
  );
  return { rest, agUi, a2a };
}

describe('what a client is told of a store fault', () => {
  it.skipIf(postgresUnavailable)(
    'PostgreSQL stopped under a running server: every route says the database is unreachable, never where it is; the log says where',
    { timeout: 60_000 },
    async () => {
      const pg = await startPostgres();
      let stopped = false;
      try {
        const url = await pg.createDatabase();
        const { PostgresStore } = await import('../../src/store/postgres-store.js');
        const store = new PostgresStore(url);
        open.push(() => store.close());
        const { server, logs } = await serve(store);
        const id: string = (await client(server.url).post('/sessions', { packageId: 'tiny' })).body.view.id;
        await pg.stop();
        stopped = true;
        const where = new URL(url);
        const secrets = [where.host, where.pathname.slice(1)];

        const { rest, agUi, a2a } = await answersOfEveryRoute(server, id);
        for (const answer of rest) {
          expect(answer.status, JSON.stringify(answer.body)).toBe(503);
          expect(answer.body.error).toMatchObject({ code: 'store_unavailable', message: expect.stringMatching(/database is unreachable/) });
        }
        expect(agUi).toMatchObject({ code: 'store_unavailable', message: expect.stringMatching(/database is unreachable/) });
        expect(a2a?.message).toMatch(/database is unreachable/);
        for (const secret of secrets) expect(JSON.stringify([rest.map((r) => r.body), agUi, a2a?.message])).not.toContain(secret);
        // The operator's log names the target.
        expect(logs.join('\n')).toContain(where.host);
      } finally {
        if (!stopped) await pg.stop();
      }
    },
  );

  it('an SQLite file error: the code and a message without the file on every route; the file in the log', async () => {
    const file = tmp.path('secret-place.db');
    const store = new SqliteStore(file);
    open.push(async () => store.close());
    const { server, logs } = await serve(store);
    const id: string = (await client(server.url).post('/sessions', { packageId: 'tiny' })).body.view.id;
    // The store's own mapping of SQLite's "malformed" error: its message names the file.
    const malformed = storeFault(Object.assign(new Error('database disk image is malformed'), { code: 'SQLITE_CORRUPT' }), file, 0);
    store.load = () => Promise.reject(malformed);
    store.list = () => Promise.reject(malformed);

    const { rest, agUi, a2a } = await answersOfEveryRoute(server, id);
    for (const answer of rest) {
      expect(answer.status, JSON.stringify(answer.body)).toBe(500);
      expect(answer.body.error).toMatchObject({ code: 'store_corrupt', message: expect.stringMatching(/log has the details/) });
    }
    expect(agUi).toMatchObject({ code: 'store_corrupt', message: expect.stringMatching(/log has the details/) });
    expect(a2a?.message).toMatch(/log has the details/);
    expect(JSON.stringify([rest.map((r) => r.body), agUi, a2a?.message])).not.toContain('secret-place');
    expect(logs.join('\n')).toContain(file);
  });
});
