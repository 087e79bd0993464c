/**
 * A package written to hurt the loader: a YAML alias bomb, symlinks out of the package
 * folder, and more workers than a prompt should list. Each is refused with a PackageError
 * naming the file and the fix, before anything expands, follows or reads it.
 */
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, expect, it } from 'vitest';
import { PackageError } from '../../src/core/errors.js';
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
import { loadPackage } from '../../src/skills/index.js';
import { useTempDir } from '../support/temp.js';

const tmp = useTempDir('steward-loader-hostile-');
let dir = '';
let n = 0;

beforeEach(() => {
  dir = tmp.path(`case${++n}/demo`);
});

function write(relativePath: string, content: string) {
  const file = join(dir, relativePath);
  mkdirSync(join(file, '..'), { recursive: true });
  writeFileSync(file, content);
}

function manifest(workers: string[]) {
  return JSON.stringify({ schemaVersion: 1, id: 'demo', title: 'Demo', description: 'A demo package.', workers });
}

const echoWorker = '---\nid: echo\ntitle: Echo\ndescription: Echoes.\ninputTags: [request]\noutputTags: [note]\n---\nYou echo.\n';

function refusal(): string {
  try {
    loadPackage(dir);
  } catch (error) {
    expect(error).toBeInstanceOf(PackageError);
    return (error as PackageError).message;
  }
  throw new Error('expected the package to be refused');
}

/** Anchors &l0..&l9, each a list of 9 aliases of the previous: 9^9 strings once expanded. */
function billionLaughs(field: string, level: number): string {
  const lines = ['l0: &l0 "lol"'];
  for (let i = 1; i <= 9; i++)
    lines.push(
      `l${i}: &l${i} [${Array(9)
        .fill(`*l${i - 1}`)
        .join(', ')}]`,
    );
  const fields: Record<string, string> = { id: 'echo', title: 'Echo', description: 'Echoes.', inputTags: '[request]', outputTags: '[note]' };
  fields[field] = `*l${level}`;
  return `---\n${lines.join('\n')}\n${Object.entries(fields)
    .map(([k, v]) => `${k}: ${v}`)
    .join('\n')}\n---\nYou echo.\n`;
}

it.each([
  ['title', 8],
  ['inputTags', 7],
  ['description', 9],
])(
  'refuses a YAML alias bomb in front matter field %s, naming the file and the fix',
  (field, level) => {
    write('manifest.json', manifest(['echo']));
    write('workers/echo.md', billionLaughs(field, level));
    const message = refusal();
    expect(message).toContain(join(dir, 'workers', 'echo.md'));
    expect(message).toContain('YAML aliases are not allowed in front matter');
    expect(message).toContain('write the value out');
  },
  20_000,
);

it('refuses a harmless alias and a lone anchor too: the rule is "no aliases", not "no big ones"', () => {
  write('manifest.json', manifest(['echo']));
  write('workers/echo.md', '---\nid: echo\ntitle: &t Echo\ndescription: *t\ninputTags: [request]\noutputTags: [note]\n---\nYou echo.\n');
  expect(refusal()).toContain('YAML aliases are not allowed in front matter');
  write('workers/echo.md', '---\nid: echo\ntitle: &t Echo\ndescription: Echoes.\ninputTags: [request]\noutputTags: [note]\n---\nYou echo.\n');
  expect(refusal()).toContain('YAML aliases are not allowed in front matter');
});

it('still reads "&" and "*" inside ordinary text', () => {
  write('manifest.json', manifest(['echo']));
  write(
    'workers/echo.md',
    '---\nid: echo\ntitle: Tom & Jerry *live*\ndescription: "&x and *y are just text"\ninputTags: [request]\noutputTags: [note]\n---\nYou echo.\n',
  );
  expect(loadPackage(dir).workers[0]).toMatchObject({ title: 'Tom & Jerry *live*', description: '&x and *y are just text' });
});

it('refuses a worker file that is a symlink out of the package folder, naming the file', () => {
  const secret = tmp.path(`case${n}/secret.md`);
  write('manifest.json', manifest(['echo']));
  mkdirSync(join(dir, 'workers'), { recursive: true });
  writeFileSync(secret, echoWorker);
  symlinkSync(secret, join(dir, 'workers', 'echo.md'));
  const message = refusal();
  expect(message).toContain(`${join(dir, 'workers', 'echo.md')}: is a symbolic link`);
  expect(message).toContain('copy the file into the package folder');
});

it('refuses a symlinked manifest and a symlinked workers folder', () => {
  const outside = tmp.path(`case${n}/outside`);
  mkdirSync(join(outside, 'workers'), { recursive: true });
  writeFileSync(join(outside, 'manifest.json'), manifest(['echo']));
  writeFileSync(join(outside, 'workers', 'echo.md'), echoWorker);
  mkdirSync(dir, { recursive: true });
  symlinkSync(join(outside, 'manifest.json'), join(dir, 'manifest.json'));
  write('workers/echo.md', echoWorker);
  expect(refusal()).toContain(`${join(dir, 'manifest.json')}: is a symbolic link`);

  rmSync(join(dir, 'manifest.json'));
  rmSync(join(dir, 'workers'), { recursive: true });
  write('manifest.json', manifest(['echo']));
  symlinkSync(join(outside, 'workers'), join(dir, 'workers'));
  expect(refusal()).toContain(`${join(dir, 'workers')}: is a symbolic link`);
});

it(`refuses more than ${DEFAULT_LIMITS.workersPerPackage} workers in the manifest before reading any worker file`, () => {
  const ids = Array.from({ length: DEFAULT_LIMITS.workersPerPackage + 1 }, (_, i) => `w${i}`);
  write('manifest.json', manifest(ids));
  mkdirSync(join(dir, 'workers'), { recursive: true });
  const message = refusal();
  expect(message).toContain(join(dir, 'manifest.json'));
  expect(message).toContain(`lists ${ids.length} workers; the limit is ${DEFAULT_LIMITS.workersPerPackage} (workersPerPackage)`);
  // One problem, not one "file not found" per worker: the files were never looked at.
  expect(message).not.toContain('file not found');
});

it(`refuses a workers folder with more than ${DEFAULT_LIMITS.workersPerPackage} .md files without one line per file`, () => {
  write('manifest.json', manifest(['echo']));
  write('workers/echo.md', echoWorker);
  for (let i = 0; i < DEFAULT_LIMITS.workersPerPackage; i++) write(`workers/extra${i}.md`, '');
  const message = refusal();
  expect(message).toBe(
    `${join(dir, 'workers')}: holds more than ${DEFAULT_LIMITS.workersPerPackage} .md files (the ` +
      `workersPerPackage limit); a package has at most ${DEFAULT_LIMITS.workersPerPackage} workers, so ` +
      `delete the files its manifest does not list or split the package.`,
  );
  expect(message).not.toContain('is not listed');
});

it(`loads exactly ${DEFAULT_LIMITS.workersPerPackage} workers`, () => {
  const ids = Array.from({ length: DEFAULT_LIMITS.workersPerPackage }, (_, i) => `w${i}`);
  write('manifest.json', manifest(ids));
  ids.forEach((id, i) =>
    write(`workers/${id}.md`, `---\nid: ${id}\ntitle: W\ndescription: One of many.\ninputTags: [request]\noutputTags: [t${i}]\n---\nYou work.\n`),
  );
  expect(loadPackage(dir).workers).toHaveLength(DEFAULT_LIMITS.workersPerPackage);
});
