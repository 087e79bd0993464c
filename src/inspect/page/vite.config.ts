/**
 * Builds the inspector page into dist/inspector (served by src/inspect/server.ts).
 * Run with `npm run build` (npm install runs it through the `prepare` script).
 * Everything, elkjs included, is bundled: the page loads nothing from the network.
 */
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = dirname(fileURLToPath(import.meta.url));

export default defineConfig({
  root: here,
  base: './',
  logLevel: 'warn',
  build: {
    outDir: resolve(here, '../../../dist/inspector'),
    emptyOutDir: true,
    target: 'es2022',
    chunkSizeWarningLimit: 2500,
    sourcemap: false,
  },
});
