#!/usr/bin/env node
// `npm run build` (and `prepare`, so `npm install` runs it): src → dist.
//   1. tsc -p tsconfig.build.json: JavaScript + declarations, same folder layout as src;
//   2. what runs beside the code: the bundled skill packages (src/skills/packages);
//   3. the inspector page, built by Vite into dist/inspector;
//   4. the `steward` command as one bundle, dist/cli/bundle (scripts/bundle-cli.mjs);
//   5. a stamp of the inputs (scripts/build-inputs.mjs): `npm run package` ships this folder
//      when it is a build of the current sources instead of building them again.
// `--out DIR` builds somewhere else (scripts/pack.mjs does when dist/ is not current).
import { execFileSync } from 'node:child_process';
import { cpSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUILD_INPUTS, hashOfPaths, writeStamp } from './build-inputs.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const at = process.argv.indexOf('--out');
const out = at > 0 && process.argv[at + 1] ? resolve(process.argv[at + 1]) : join(root, 'dist');
const started = Date.now();
// Taken before building: an edit made meanwhile shows as a change, never as built.
const inputs = hashOfPaths(root, BUILD_INPUTS);

rmSync(out, { recursive: true, force: true });
execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json'), '--outDir', out], { stdio: 'inherit' });
cpSync(join(root, 'src/skills/packages'), join(out, 'skills/packages'), { recursive: true });
const { build } = await import('vite');
await build({ configFile: join(root, 'src/inspect/page/vite.config.ts'), logLevel: 'warn', build: { outDir: join(out, 'inspector'), emptyOutDir: true } });
const { bundleCli } = await import('./bundle-cli.mjs');
await bundleCli(root, join(out, 'cli/bundle'));
writeStamp(out, inputs);
console.log(`steward: built ${out} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
