/**
 * The inspector page built from the current sources (dist/inspector may be stale or missing),
 * once per set of sources rather than once per test file (see test/support/build-cache.ts). The
 * compiled CLI of the same sources serves it as its dist/inspector (test/support/cli-build.ts).
 */
import { join } from 'node:path';
import { cachedBuild } from '../support/build-cache.js';

let built: Promise<string> | null = null;

export function buildPage(): Promise<string> {
  built ??= cachedBuild('inspector-page', async (outDir) => {
    // Vite is loaded only to build: a file whose page is already built does not pay for it.
    const { build } = await import('vite');
    await build({ configFile: join(process.cwd(), 'src/inspect/page/vite.config.ts'), logLevel: 'error', build: { outDir, emptyOutDir: true } });
  });
  return built;
}
