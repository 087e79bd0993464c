/**
 * vitest's global setup (vitest.config.ts), in the main vitest process: a folder for this run
 * that test files share through `inject('stewardRunDir')`. What they start there for the whole
 * run (the PostgreSQL cluster, see sharedPostgres in postgres.ts) is stopped here at the end.
 * Nothing is started here: a run whose files need none of it pays nothing.
 *
 * vitest runs a global setup once per project that has files in the run, and once for the root
 * config; the first call makes the folder and owns the teardown, the others hand out the same one.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { stopSharedPostgres } from './postgres-cluster.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The run's shared folder (absent when the tests run without this global setup). */
    stewardRunDir?: string;
  }
}

const RUN = Symbol.for('steward.test-run-dir');
const state = globalThis as { [RUN]?: string };

export default function setup(project: TestProject): (() => Promise<void>) | undefined {
  const existing = state[RUN];
  if (existing) {
    project.provide('stewardRunDir', existing);
    return undefined;
  }
  const runDir = mkdtempSync(join(tmpdir(), 'steward-test-run-'));
  state[RUN] = runDir;
  project.provide('stewardRunDir', runDir);
  const teardown = async () => {
    process.off('exit', teardownNow);
    teardownNow();
    delete state[RUN];
  };
  // Also on exit (Ctrl+C, a crash of vitest itself): the server must not outlive the run.
  const teardownNow = () => {
    try {
      stopSharedPostgres(runDir);
    } finally {
      rmSync(runDir, { recursive: true, force: true });
    }
  };
  process.on('exit', teardownNow);
  return teardown;
}
