#!/usr/bin/env node
// `npm run package`: the tarball a user installs (steward-VERSION.tgz), built in a staging
// copy so the repository's dist/ is left alone:
//   1. copy what ships (package.json, README, LICENSE, bin/, docs/) to a temp folder;
//   2. its dist/: a copy of the repository's dist/ when that is a build of the current sources
//      (its stamp says so, scripts/build-inputs.mjs: `npm install` has just built it), else
//      built there (scripts/build.mjs --out STAGE/dist); which of the two, on stderr;
//   3. write the package.json a user gets: without `scripts` (they run repository files —
//      `prepare` would run scripts/build.mjs, which the tarball lacks, on a folder or git
//      install), without `devDependencies` (the repository's tools) and without
//      `workspaces` (the benchmark's package, bench/load, is not shipped);
//   4. `npm pack --ignore-scripts` there (the build has just run).
// A plain `npm pack` in the repository would pack the repository's package.json, so
// `prepack` refuses it and names this script.
//   --out DIR   where the .tgz goes (default: the repository root)
//   --json      print `npm pack --json`'s report instead of the file name
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SHIPPED_AS_IS, STAMP, stampMismatch } from './build-inputs.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const option = (name) => {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : undefined;
};
const out = resolve(option('--out') ?? root);
const json = process.argv.includes('--json');

const stage = mkdtempSync(join(tmpdir(), 'steward-stage-'));
try {
  for (const p of SHIPPED_AS_IS) cpSync(join(root, p), join(stage, p), { recursive: true });
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  delete manifest.scripts;
  delete manifest.devDependencies;
  delete manifest.workspaces;
  writeFileSync(join(stage, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  // The copy is what is checked (its files against the stamp's hash of them), so a build of
  // dist/ running meanwhile cannot mix into it unseen.
  const dist = join(stage, 'dist');
  if (existsSync(join(root, 'dist'))) cpSync(join(root, 'dist'), dist, { recursive: true });
  const mismatch = existsSync(dist) ? stampMismatch(root, dist) : 'there is no dist/';
  if (mismatch === undefined) {
    console.error("steward: packing the repository's dist/ (its build stamp matches the current sources)");
  } else {
    console.error(`steward: building the package (the repository's dist/ is not a build of the current sources: ${mismatch})`);
    execFileSync(process.execPath, [join(root, 'scripts/build.mjs'), '--out', dist], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  }
  // The stamp is the repository's record of its build, not part of the package.
  rmSync(join(dist, STAMP));
  const report = execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', out], { cwd: stage, maxBuffer: 16 << 20, encoding: 'utf8' });
  process.stdout.write(json ? report : `${join(out, JSON.parse(report)[0].filename)}\n`);
} finally {
  rmSync(stage, { recursive: true, force: true });
}
