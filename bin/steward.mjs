#!/usr/bin/env node
// The `steward` command: the compiled CLI (npm install / npm run build write dist/).
// Nothing is compiled at start; the tests run the sources through test/support/steward-src.mjs.
import { existsSync } from 'node:fs';

const entry = new URL('../dist/cli/bundle/main.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('steward: dist/cli/bundle/main.js is missing: run `npm run build` (npm install runs it) in the Steward folder.\n');
  process.exit(1);
}
const { runAsProcess } = await import(entry.href);
await runAsProcess(process.argv);
