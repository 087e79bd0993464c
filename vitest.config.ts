import { defineConfig } from 'vitest/config';

/**
 * Files that start heavy things (Chromium, a PostgreSQL cluster, a tarball install, a
 * benchmark): they run one at a time, after the rest, so two never compete for the cores.
 */
const heavy = [
  'test/bench/**/*.test.ts',
  'test/consumer/**/*.test.ts',
  'test/examples/**/*.test.ts',
  // Chromium
  'test/http/browser-guards.test.ts',
  'test/inspect/inspector-*.test.ts',
  'test/inspect/live-progress.test.ts',
  'test/protocols/ag-ui-browser.test.ts',
  'test/react/use-session.test.ts',
  'test/serve/browser-page.test.ts',
  // PostgreSQL
  'test/cli/postgres.test.ts',
  'test/cli/resume-lease.test.ts',
  'test/protocols/*-postgres.test.ts',
  'test/serve/client-errors.test.ts',
  'test/serve/lease-processes.test.ts',
  'test/serve/serve-postgres*.test.ts',
  'test/serve/takeover.test.ts',
  'test/serve/three-servers.test.ts',
  'test/store/lease-gone-holder.test.ts',
  'test/store/postgres-*.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 20_000,
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['test/**/*.test.ts'], exclude: heavy, maxWorkers: 2, sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: { name: 'e2e', include: heavy, fileParallelism: false, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
