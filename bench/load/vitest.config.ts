import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// `npm test` of this package (`npm run test:bench` at the repository's root): the checks the
// load benchmark relies on, then its `--quick` run, one file at a time. Not part of Steward's `npm test`.
export default defineConfig({
  test: {
    root: fileURLToPath(new URL('.', import.meta.url)),
    include: ['test/*.test.ts'],
    fileParallelism: false,
    testTimeout: 20_000,
  },
});
