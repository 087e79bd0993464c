/**
 * One throwaway PostgreSQL server for the calling test file: started before its tests (unless
 * PostgreSQL is missing, see `postgresUnavailable`) and stopped after them. Kept apart from
 * postgres.ts, which the benchmark imports outside vitest.
 */
import { afterAll, beforeAll } from 'vitest';
import { postgresUnavailable, startPostgres, type TestPostgres } from './postgres.js';

export function usePostgres(): TestPostgres {
  let server: TestPostgres | undefined;
  beforeAll(async () => {
    if (postgresUnavailable) return;
    server = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  }, 60_000);
  const running = () => {
    if (!server) throw new Error('PostgreSQL is not running for this file (see postgresUnavailable).');
    return server;
  };
  return {
    get adminUrl() {
      return running().adminUrl;
    },
    createDatabase: () => running().createDatabase(),
    viaSocket: (url) => running().viaSocket(url),
    stop: async () => {},
  };
}
