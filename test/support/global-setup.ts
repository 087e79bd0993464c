/**
 * vitest's global setup (vitest.config.ts), in the main vitest process: a folder for this run
 * that test files share through `inject('stewardRunDir')`. What they start there for the whole
 * run (the PostgreSQL cluster, see sharedPostgres in postgres.ts; Chromium, see
 * shared-chromium.ts) is stopped here at the end.
 *
 * One thing is started here, and only when a file of the run needs it: the packed tarball and
 * its shared install (tarball.ts), in the background. They take a minute or more and only heavy
 * files (run after the unit files) use them, so they are made while the unit files run instead
 * of with those files' workers waiting on them. Those files wait for this process to finish
 * them as for any other maker (or make them themselves if it failed), so this only moves when
 * the work is done. A run whose files need none of it pays nothing.
 *
 * vitest runs a global setup once per project that has files in the run, and once for the root
 * config; the first call makes the folder and owns the teardown, the others hand out the same one.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { stopSharedPostgres } from './postgres-cluster.js';
import { stopSharedChromium } from './shared-chromium.js';
import { installedSteward } from './tarball.js';

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
  // A failure is the test files' to report: they make it again themselves.
  const install = usesTarball(project) ? installedSteward().catch(() => undefined) : undefined;
  const teardown = async () => {
    // Not left running past the run (only possible when the run stopped early).
    await install;
    process.off('exit', teardownNow);
    teardownNow();
    delete state[RUN];
  };
  // Also on exit (Ctrl+C, a crash of vitest itself): the servers must not outlive the run.
  const teardownNow = () => {
    try {
      stopSharedChromium(runDir);
      stopSharedPostgres(runDir);
    } finally {
      rmSync(runDir, { recursive: true, force: true });
    }
  };
  process.on('exit', teardownNow);
  return teardown;
}

/** Whether a test file of this run imports tarball.ts (the files of all projects are known by now). */
function usesTarball(project: TestProject): boolean {
  return project.vitest.state.getPaths().some((file) => /from '\.\.\/support\/tarball\.js'/.test(readFileSync(file, 'utf8')));
}
