import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// `npm run test:bench`: the checks of `npm run bench`'s harness and its `--quick` run, one file
// at a time (a benchmark wants the cores). Not part of `npm test`.
export default defineConfig({
  test: {
    root: fileURLToPath(new URL('.', import.meta.url)),
    include: ['test/*.test.ts'],
    fileParallelism: false,
    testTimeout: 20_000,
  },
});
