// What decides a build of the package, and the stamp a build leaves in the folder it built:
// scripts/build.mjs writes the stamp, scripts/pack.mjs reads it to ship the repository's dist/
// (which `npm install` has just built) instead of building the same sources again, and the
// tests key their own builds and the packed tarball by the same hashes (test/support).
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * The files, from the repository's root, that decide what scripts/build.mjs writes: the
 * sources, the build scripts, the compiler settings, and package-lock.json for the packages
 * the CLI bundle and the inspector page take in (and the tsc, Vite and esbuild that build).
 */
export const BUILD_INPUTS = ['src', 'scripts', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json'];

/** What scripts/pack.mjs ships as it is, beside the build and the package.json it writes. */
export const SHIPPED_AS_IS = ['README.md', 'LICENSE', 'bin', 'docs'];

/** The stamp's file name, in the folder a build wrote (not shipped: pack.mjs leaves it out). */
export const STAMP = 'build-stamp.json';

/**
 * Every file under `path` (or `path` itself), in a stable order.
 * @example listFiles(join(root, 'src')) // ['/repo/src/cli/main.ts', …]
 */
export function listFiles(path) {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path)
    .sort()
    .flatMap((name) => listFiles(join(path, name)));
}

/**
 * A hash of the files' names (from `root`) and contents.
 * @example hashOf(root, [join(root, 'package.json')]) // '3f9a…' (16 hex digits)
 */
export function hashOf(root, files) {
  const hash = createHash('sha256');
  for (const file of files) hash.update(relative(root, file)).update('\0').update(readFileSync(file)).update('\0');
  return hash.digest('hex').slice(0, 16);
}

/**
 * A hash of the files under `paths` (from `root`).
 * @example hashOfPaths(root, BUILD_INPUTS)
 */
export function hashOfPaths(root, paths) {
  return hashOf(
    root,
    paths.flatMap((p) => listFiles(join(root, p))),
  );
}

/** A hash of what a build wrote to `out`, its stamp left out. */
function outputHash(out) {
  return hashOf(
    out,
    listFiles(out).filter((file) => file !== join(out, STAMP)),
  );
}

/**
 * Writes the stamp into `out` once a build of `inputs` (hashOfPaths(root, BUILD_INPUTS), taken
 * before it started, so an edit made during the build shows as a change) has written it.
 * @example writeStamp(join(root, 'dist'), inputs)
 */
export function writeStamp(out, inputs) {
  writeFileSync(join(out, STAMP), `${JSON.stringify({ inputs, output: outputHash(out) }, null, 2)}\n`);
}

/**
 * Why `out` is not a build of `root`'s current sources as scripts/build.mjs writes it, or
 * undefined when it is: no stamp, other inputs, or files changed since (by hand, by another
 * tool writing into it).
 * @example stampMismatch(root, join(root, 'dist')) // undefined, or 'the sources changed since it was built'
 */
export function stampMismatch(root, out) {
  const file = join(out, STAMP);
  if (!existsSync(file)) return `it has no ${STAMP}`;
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return `its ${STAMP} does not parse`;
  }
  if (stamp?.inputs !== hashOfPaths(root, BUILD_INPUTS)) return 'the sources changed since it was built';
  if (stamp.output !== outputHash(out)) return 'its files changed since it was built';
  return undefined;
}
