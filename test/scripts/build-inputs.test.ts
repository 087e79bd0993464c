/**
 * The build stamp (scripts/build-inputs.mjs) that lets `npm run package` ship the repository's
 * dist/ instead of building again: it matches a build of the current sources and nothing else
 * (an edited input, a file of the build changed or added afterwards, no stamp). On a small
 * made-up repository, so the real dist/ is not touched; the consumer test packs the real one.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { BUILD_INPUTS, hashOfPaths, STAMP, stampMismatch, writeStamp } from '../../scripts/build-inputs.mjs';
import { useTempDir } from '../support/temp.js';

const temp = useTempDir('steward-build-stamp-');
let root = '';
let out = '';

function write(path: string, text: string): void {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
}

/** A "build": some files in out/, then the stamp of the inputs as they were before it. */
function build(): void {
  const inputs = hashOfPaths(root, BUILD_INPUTS);
  rmSync(out, { recursive: true, force: true });
  write(join(out, 'index.js'), 'export const a = 1;\n');
  write(join(out, 'cli/bundle/main.js'), 'console.log(1);\n');
  writeStamp(out, inputs);
}

describe('the build stamp', () => {
  beforeEach(() => {
    root = temp.path(`repo-${Math.random().toString(36).slice(2)}`);
    out = join(root, 'dist');
    write(join(root, 'src/index.ts'), 'export const a = 1;\n');
    write(join(root, 'scripts/build.mjs'), '// build\n');
    write(join(root, 'package.json'), '{"name":"steward"}\n');
    write(join(root, 'package-lock.json'), '{}\n');
    write(join(root, 'tsconfig.json'), '{}\n');
    write(join(root, 'tsconfig.build.json'), '{}\n');
    build();
  });

  it('matches a build of the current sources', () => {
    expect(stampMismatch(root, out)).toBeUndefined();
  });

  it.each([
    ['a source edited', 'src/index.ts', 'export const a = 2;\n'],
    ['a source added', 'src/more.ts', 'export {};\n'],
    ['the lockfile (the bundled packages, the build tools)', 'package-lock.json', '{"lockfileVersion":3}\n'],
    ['a build script', 'scripts/bundle-cli.mjs', '// bundle\n'],
    ['the compiler settings', 'tsconfig.build.json', '{"compilerOptions":{}}\n'],
  ])('does not match once %s', (_, path, text) => {
    write(join(root, path), text);
    expect(stampMismatch(root, out)).toBe('the sources changed since it was built');
  });

  it('matches again once built again', () => {
    write(join(root, 'src/index.ts'), 'export const a = 2;\n');
    build();
    expect(stampMismatch(root, out)).toBeUndefined();
  });

  it.each([
    ['a built file edited', 'index.js'],
    ['a file added to the build', 'inspector/index.html'],
  ])('does not match with %s after the build', (_, path) => {
    write(join(out, path), 'changed\n');
    expect(stampMismatch(root, out)).toBe('its files changed since it was built');
  });

  it('does not match a folder without a stamp, or with one that does not parse', () => {
    rmSync(join(out, STAMP));
    expect(stampMismatch(root, out)).toBe(`it has no ${STAMP}`);
    write(join(out, STAMP), '{');
    expect(stampMismatch(root, out)).toBe(`its ${STAMP} does not parse`);
  });

  it('is not changed by what is outside the inputs (tests, docs, the shipped README)', () => {
    write(join(root, 'test/a.test.ts'), 'x\n');
    write(join(root, 'docs/design.md'), 'x\n');
    write(join(root, 'README.md'), 'x\n');
    expect(stampMismatch(root, out)).toBeUndefined();
  });
});
