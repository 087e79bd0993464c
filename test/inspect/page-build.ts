/**
 * Builds the inspector page once per test file into a temporary folder, so the browser
 * tests always see the current sources (dist/inspector may be stale or missing).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'vite';

let built: Promise<string> | null = null;

export function buildPage(): Promise<string> {
  built ??= (async () => {
    const outDir = mkdtempSync(join(tmpdir(), 'steward-inspector-page-'));
    await build({ configFile: join(process.cwd(), 'src/inspect/page/vite.config.ts'), logLevel: 'error', build: { outDir, emptyOutDir: true } });
    return outDir;
  })();
  return built;
}
