/**
 * steward/client and steward/react are for web pages: esbuild bundles each for
 * `platform: 'browser'` and no Node built-in is reached (a `node:` import, or `fs`, `path`, …
 * without the prefix). React stays outside the hook's bundle (the app brings it). Prints the sizes.
 */
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { browserBundle } from '../support/browser-bundle.js';
import { root } from '../support/cli-process.js';

async function bundle(entry: string, external: string[] = []): Promise<{ reached: string[]; bytes: number; gzipped: number }> {
  return browserBundle({ entry: join(root, entry) }, { external });
}

it.each([
  ['steward/client', 'src/client.ts', [], 50_000],
  ['steward/react', 'src/react.ts', ['react'], 1_000],
])('esbuild bundles %s for the browser with no Node built-in', async (name, entry, external, atLeast) => {
  const { reached, bytes, gzipped } = await bundle(entry, external);
  expect(reached).toEqual([]);
  expect(bytes).toBeGreaterThan(atLeast);
  console.log(`${name}: ${(bytes / 1024).toFixed(1)} kB minified, ${(gzipped / 1024).toFixed(1)} kB gzipped`);
});

it('the check sees a Node built-in when one is there', async () => {
  const { reached } = await bundle('src/store/lease-keeper.ts');
  expect(reached.some((r) => r.startsWith('node:os'))).toBe(true);
});
