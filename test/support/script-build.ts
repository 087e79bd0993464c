/**
 * The TypeScript programs the tests start as processes of their own (a session run in another
 * process, a second store writer), compiled once per set of sources (build-cache.ts) instead of
 * through tsx at each start, which compiled every module of src/ again in every such process.
 * Each program is compiled on its own, its imports kept: the folder beside it that the program
 * reaches as ../src is a link to the compiled CLI's dist/ (cli-build.ts), so what it loads from
 * src/ is those modules one by one, as tsx loaded the sources (lazy imports stay lazy, files
 * src/ finds beside itself are there). Laid out as in the repository, so a process's command
 * line still says which program it is.
 */
import { mkdirSync, symlinkSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cachedBuildSync } from './build-cache.js';
import { compiledPackage } from './cli-build.js';
import { buildPrograms } from './program-build.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The programs a test starts as a process, paths from the repository's root. */
const SCRIPTS = [
  'test/inspect/fixtures/cli-step.ts',
  'test/inspect/fixtures/remote-run.ts',
  'test/support/store-writer.ts',
  'test/tools/fixtures/ask-then-wait.ts',
  'test/tools/fixtures/call-then-hang.ts',
] as const;
type TestScript = (typeof SCRIPTS)[number];

function build(out: string): void {
  buildPrograms(SCRIPTS, out, { tsconfig: join(root, 'tsconfig.json') });
  const dist = join(compiledPackage(), 'dist');
  mkdirSync(out, { recursive: true });
  // Relative, so the link still holds once the build is renamed into place.
  symlinkSync(relative(out, dist), join(out, 'src'));
}

let folder: string | undefined;

/**
 * The compiled file of program `script` (a path from the repository's root), built on first use.
 *
 * @example
 * spawn(process.execPath, [testScript('test/support/store-writer.ts'), db, session, '50', 'A']);
 */
export function testScript(script: TestScript): string {
  folder ??= cachedBuildSync('test-scripts', build);
  return join(folder, script.replace(/\.ts$/, '.mjs'));
}
