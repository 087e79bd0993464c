import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// `npm run test:bench`: the checks of `npm run bench`'s harness and its `--quick` run (bench/test),
// beside the load benchmark's (bench/load's own package, whose `npm test` runs its half alone).
// Not part of `npm test`. Each half is mostly one busy process: one vitest run with both as
// projects keeps both cores busy, where one run after the other left one idle. Two files at a
// time, whichever project they are from (vitest queues the projects by name: bench-load, whose
// --quick run is the longest file, starts first). No assertion in them is on a timing, and each
// run makes its own temp folders, ports, PostgreSQL cluster and JSON files.
const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  test: {
    projects: [
      { test: { name: 'bench-run', root: here('.'), include: ['test/*.test.ts'], testTimeout: 20_000, maxWorkers: 2 } },
      { extends: here('load/vitest.config.ts'), test: { name: 'bench-load', fileParallelism: true, maxWorkers: 2 } },
    ],
  },
});
