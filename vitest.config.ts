import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Every test file under `dir`, as a path from the repository's root. */
function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : testFiles(path);
    return entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/**
 * What makes a file heavy: it drives Chromium (test/support/chromium.ts), uses PostgreSQL (the run's one cluster, which
 * the first such file starts; timed leases) or installs the packed tarball. Read from the files themselves (what they import), so a new one cannot be
 * left off a list here. The benchmarks are not in this suite: `npm run test:bench` runs their
 * checks (bench/vitest.config.ts, bench/load's own package).
 */
const STARTS_HEAVY_THINGS = /from '(playwright-core|\.\.\/support\/(use-postgres|postgres|postgres-serve|tarball|chromium|kept-pages)\.js)'/;
/** Every test file's text, read once for both uses below. */
const sources = new Map(testFiles('test').map((file) => [file, readFileSync(file, 'utf8')]));
/** The test files whose text matches `imports`. */
const importing = (imports: RegExp) => [...sources].filter(([, text]) => imports.test(text)).map(([file]) => file);
const heavy = importing(STARTS_HEAVY_THINGS);

/** The files that use the installed tarball: the longest of the run (npm installs, tsc, builds). */
const usesTheInstall = new Set(importing(/from '\.\.\/support\/tarball\.js'/).map((file) => resolve(file)));

/**
 * vitest's order (each project's files in turn; the longest first, by the durations it kept from
 * the last run), with the files that use the install first in their project. A fresh clone (CI)
 * has no durations, and vitest then runs the largest files first: the examples' file, one of the
 * longest, came last, and the run waited for it alone while the other workers had nothing left.
 */
class InstallFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const byProject = new Map<TestSpecification['project'], TestSpecification[]>();
    for (const spec of await super.sort(files)) {
      const specs = byProject.get(spec.project) ?? [];
      specs.push(spec);
      byProject.set(spec.project, specs);
    }
    const first = (spec: TestSpecification) => usesTheInstall.has(resolve(spec.moduleId));
    return [...byProject.values()].flatMap((specs) => [...specs.filter(first), ...specs.filter((spec) => !first(spec))]);
  }
}

// Heavy files run after the rest, so they never compete with the unit files for the cores. The unit
// files keep both cores busy two at a time (a third worker cost more CPU, loading the modules
// again, than it filled). The heavy files run three at a time: much of their time is spent
// waiting (a lease to run out, a killed server, a browser), which a third file fills. None
// depends on timing under load: leases are long or renewed, waits are generous.
// `npm run test:fast` runs the unit project alone; `npm test` both.
// Both projects' files share their workers' loaded modules (isolate: false): a fresh module graph per
// file loaded the same sources and packages again for every file, most of a light file's time and
// much of a heavy file's CPU. No file leaves global state behind (stubs, fake timers and
// listeners are undone after each test; the heavy files only read process.env), and what the
// heavy files share through module state (the run's PostgreSQL, Chromium and tarball) is the run's.
// The transformed sources are kept on disk between processes (node_modules/.experimental-vitest-cache,
// keyed by each file's content and the configuration): each worker and each run
// transformed the same sources again. No plugin here reads other files, which would make it stale.
export default defineConfig({
  test: {
    testTimeout: 20_000,
    // expect.poll gives up after a second by default: a wait on another process, a database or a
    // browser can take longer than that in a busy run, and no test is about how fast it comes.
    expect: { poll: { timeout: 10_000 } },
    experimental: { fsModuleCache: true },
    globalSetup: ['test/support/global-setup.ts'],
    sequence: { sequencer: InstallFirst },
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['test/**/*.test.ts'], exclude: heavy, maxWorkers: 2, isolate: false, sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: { name: 'e2e', include: heavy, maxWorkers: 3, isolate: false, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
