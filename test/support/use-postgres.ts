/**
 * PostgreSQL for the calling test file: the run's one throwaway cluster (started by the first
 * file that asks, see sharedPostgres), or STEWARD_TEST_PG's server, unless PostgreSQL is missing
 * (see `postgresUnavailable`). Each file makes its own databases with createDatabase(); they are
 * dropped after its tests. Kept apart from postgres.ts, which the benchmark imports outside vitest.
 */
import { afterAll, beforeAll, inject } from 'vitest';
import { postgresUnavailable, sharedPostgres, startPostgres, type TestPostgres } from './postgres.js';

export function usePostgres(): TestPostgres {
  let server: TestPostgres | undefined;
  beforeAll(async () => {
    if (postgresUnavailable) return;
    // Without the run's global setup (another config), a cluster of this file's own.
    const runDir = inject('stewardRunDir');
    server = runDir ? await sharedPostgres(runDir) : await startPostgres();
  }, 120_000);
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
