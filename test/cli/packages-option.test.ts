/**
 * Your own skill packages in every command: `--packages DIR` (repeatable), STEWARD_PACKAGES
 * and the `packages` field of stately.config.json, in that order of precedence, beside the
 * bundled packages; `steward serve` creates sessions of them over HTTP.
 */
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { expect, it } from 'vitest';
import { bundledPackagesDir } from '../../src/skills/index.js';
import { client } from '../serve/http.js';
import { parseJson, runCli, startCli, until } from '../support/cli-process.js';
import { useTempDir } from '../support/temp.js';

const tmp = useTempDir('steward-packages-option-');

/** A folder of package folders holding a copy of the bundled `tiny` package under `id` (and that title). */
function packagesFolder(name: string, id: string, title = id): string {
  const root = tmp.path(name);
  mkdirSync(root, { recursive: true });
  cpSync(join(bundledPackagesDir, 'tiny'), join(root, id), { recursive: true });
  const file = join(root, id, 'manifest.json');
  const manifest = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  writeFileSync(file, JSON.stringify({ ...manifest, id, title }));
  return root;
}

const listed = async (args: string[], options: { env?: Record<string, string>; cwd?: string } = {}): Promise<Array<{ id: string; title: string }>> =>
  parseJson(await runCli(['packages', '--json', ...args], { db: tmp.path('list.db'), ...options }));

it('lists the packages of --packages DIR (repeatable) beside the bundled ones', async () => {
  const one = packagesFolder('one', 'team-one');
  const two = packagesFolder('two', 'team-two');
  expect((await listed(['--packages', one])).map((p) => p.id)).toEqual(['file-notes', 'research-brief', 'short-story', 'team-one', 'tiny']);
  expect((await listed(['--packages', one, '--packages', two])).map((p) => p.id)).toEqual([
    'file-notes',
    'research-brief',
    'short-story',
    'team-one',
    'team-two',
    'tiny',
  ]);
}, 60_000);

it('reads STEWARD_PACKAGES (folders separated by the path delimiter) and the config field, relative to the config file', async () => {
  const one = packagesFolder('env-one', 'env-one');
  const two = packagesFolder('env-two', 'env-two');
  expect((await listed([], { env: { STEWARD_PACKAGES: [one, two].join(delimiter) } })).map((p) => p.id)).toEqual([
    'env-one',
    'env-two',
    'file-notes',
    'research-brief',
    'short-story',
    'tiny',
  ]);

  const project = tmp.path('project');
  packagesFolder('project/packages', 'from-config');
  writeFileSync(join(project, 'stately.config.json'), JSON.stringify({ packages: ['./packages'] }));
  expect((await listed([], { cwd: project })).map((p) => p.id)).toEqual(['file-notes', 'from-config', 'research-brief', 'short-story', 'tiny']);
}, 60_000);

it('takes the flag over the environment over the config file; your package replaces a bundled one of the same id', async () => {
  const project = tmp.path('precedence');
  packagesFolder('precedence/packages', 'tiny', 'Tiny from the config');
  writeFileSync(join(project, 'stately.config.json'), JSON.stringify({ packages: ['packages'] }));
  const fromEnv = packagesFolder('precedence-env', 'tiny', 'Tiny from the environment');
  const fromFlag = packagesFolder('precedence-flag', 'tiny', 'Tiny from the flag');
  const tinyTitle = async (args: string[], env?: Record<string, string>) =>
    (await listed(args, { cwd: project, ...(env ? { env } : {}) })).find((p) => p.id === 'tiny')?.title;

  expect(await tinyTitle([])).toBe('Tiny from the config');
  expect(await tinyTitle([], { STEWARD_PACKAGES: fromEnv })).toBe('Tiny from the environment');
  expect(await tinyTitle(['--packages', fromFlag], { STEWARD_PACKAGES: fromEnv })).toBe('Tiny from the flag');
}, 60_000);

it('refuses a package defined in two of your folders, a missing folder and a package folder given for its parent, naming the fix', async () => {
  const db = tmp.path('errors.db');
  const one = packagesFolder('dup-one', 'twice');
  const two = packagesFolder('dup-two', 'twice');
  const duplicate = await runCli(['packages', '--packages', one, '--packages', two], { db });
  expect(duplicate.code).toBe(1);
  expect(duplicate.stderr).toContain(`Package "twice" is defined twice: in ${join(one, 'twice')} and in ${join(two, 'twice')}`);

  const missing = await runCli(['new', '--packages', tmp.path('nowhere')], { db });
  expect(missing.code).toBe(1);
  expect(missing.stderr).toContain(`--packages names the packages folder ${tmp.path('nowhere')}, which does not exist; create it`);

  const packageItself = await runCli(['packages'], { db, env: { STEWARD_PACKAGES: join(one, 'twice') } });
  expect(packageItself.code).toBe(1);
  expect(packageItself.stderr).toContain(
    `is a package folder itself (it holds a manifest.json), not a folder of package folders; pass the folder that holds it: ${one}`,
  );
}, 60_000);

it('runs a session of your package with new, and creates one over HTTP with serve --packages', async () => {
  const db = tmp.path('serve.db');
  const mine = packagesFolder('serve', 'code-review');
  const created = await runCli(['new', '--package', 'code-review', '--json', '--packages', mine], { db });
  expect(parseJson(created).packageId).toBe('code-review');

  const cli = startCli(['serve', '--port', '0', '--packages', mine], { db, env: { STEWARD_TOKEN: 't'.repeat(24) }, timeoutMs: 60_000 });
  try {
    const base = await until(() => /Steward serve on (http:\/\/127\.0\.0\.1:\d+)/.exec(cli.stdout)?.[1], 'the server URL', 30_000);
    const reply = await client(base, 't'.repeat(24)).post('/sessions', { packageId: 'code-review' });
    expect(reply.status).toBe(201);
    expect(reply.body.view.packageId).toBe('code-review');
  } finally {
    cli.child.kill('SIGTERM');
    await cli.result;
  }
}, 90_000);

it('runs your package to done with run, shows it with show, and inspect reads the same folders', async () => {
  const db = tmp.path('run.db');
  const mine = packagesFolder('run', 'my-team');
  const run = await runCli(['run', '--package', 'my-team', '--request', 'A lighthouse that remembers', '--packages', mine], { db });
  expect(run.code, run.stderr).toBe(0);
  const [session] = parseJson<Array<{ id: string }>>(await runCli(['list', '--json', '--packages', mine], { db }));
  const shown = parseJson(await runCli(['show', session!.id, '--json'], { db, env: { STEWARD_PACKAGES: mine } }));
  expect([shown.packageId, shown.phase]).toEqual(['my-team', 'done']);

  const inspect = await runCli(['inspect', '--json', '--port', '0', '--packages', tmp.path('no-such-folder')], { db });
  expect(inspect.code).toBe(1);
  expect(inspect.stderr).toContain(`--packages names the packages folder ${tmp.path('no-such-folder')}, which does not exist`);
}, 90_000);

it('init-package writes a starter package that loads and runs to done; refuses a bad id and an existing folder', async () => {
  const project = tmp.path('init');
  mkdirSync(project);
  const db = tmp.path('init.db');
  const init = await runCli(['init-package', 'code-review'], { db, cwd: project });
  expect(init.code, init.stderr).toBe(0);
  expect(init.stdout).toContain('Start a session of it with: steward run --package code-review\n');
  expect(readFileSync(join(project, 'packages/code-review/workers/researcher.md'), 'utf8')).toContain('# The tags this worker reads');
  const packages = parseJson<Array<{ id: string; workers: Array<{ id: string }> }>>(await runCli(['packages', '--json'], { db, cwd: project }));
  expect(packages.find((p) => p.id === 'code-review')?.workers.map((w) => w.id)).toEqual(['researcher', 'writer']);
  const run = await runCli(['run', '--package', 'code-review', '--request', 'Review this diff'], { db, cwd: project });
  expect(run.code, run.stderr).toBe(0);
  const [session] = parseJson<Array<{ state: string }>>(await runCli(['list', '--json'], { db, cwd: project }));
  expect(session?.state).toBe('done');

  const again = await runCli(['init-package', 'code-review'], { db, cwd: project });
  expect([again.code, again.stderr]).toEqual([1, expect.stringContaining('code-review already exists; choose another name')]);
  const bad = await runCli(['init-package', 'Code Review'], { db, cwd: project });
  expect([bad.code, bad.stderr]).toEqual([1, expect.stringContaining('is not a package id; use lowercase letters')]);
}, 90_000);

it('init-package lists its folder in stately.config.json, keeping what the file held; the machines still load from Steward', async () => {
  const project = tmp.path('init-config');
  mkdirSync(project);
  writeFileSync(join(project, 'stately.config.json'), JSON.stringify({ inspect: 'off' }));
  const db = tmp.path('init-config.db');
  const init = await runCli(['init-package', 'notes', '--dir', 'team'], { db, cwd: project });
  expect(init.code, init.stderr).toBe(0);
  expect(init.stdout).toContain(`Listed ./team in "packages" of ${join(project, 'stately.config.json')}`);
  expect(JSON.parse(readFileSync(join(project, 'stately.config.json'), 'utf8'))).toEqual({ inspect: 'off', packages: ['./team'] });
  const second = await runCli(['init-package', 'more-notes', '--dir', 'team'], { db, cwd: project });
  expect(second.stdout).toContain('lists ./team already');
  expect(JSON.parse(readFileSync(join(project, 'stately.config.json'), 'utf8'))).toEqual({ inspect: 'off', packages: ['./team'] });
  // A config without "machines" names Steward's own chart, wherever the command runs.
  const diagram = await runCli(['diagram', '--format', 'json'], { db, cwd: project });
  expect(diagram.code, diagram.stderr).toBe(0);
}, 120_000);

it('refuses an unknown package before the store opens, naming --packages and the folder that holds it', async () => {
  const project = tmp.path('unknown');
  mkdirSync(project);
  const db = tmp.path('unknown.db');
  expect((await runCli(['init-package', 'notes', '--no-config'], { db, cwd: project })).code).toBe(0);
  expect(existsSync(join(project, 'stately.config.json'))).toBe(false);
  for (const args of [
    ['run', '--package', 'notes'],
    ['new', '--package', 'notes'],
  ]) {
    const refused = await runCli(args, { db, cwd: project });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      `Unknown package "notes". Packages: file-notes, research-brief, short-story, tiny. packages/notes holds a package folder of that name`,
    );
    expect(refused.stderr).toContain(`steward ${args[0]} --package notes --packages packages --db ${db}`);
  }
  const elsewhere = await runCli(['run', '--package', 'nowhere'], { db, cwd: project });
  expect(elsewhere.stderr).toContain('load from the folder that holds their folders: --packages DIR, STEWARD_PACKAGES');
  const missing = await runCli(['run', '--session', 's_abcdefgh'], { db, cwd: project });
  expect([missing.code, missing.stderr]).toEqual([1, expect.stringContaining('No session "s_abcdefgh"')]);
  expect(existsSync(db)).toBe(false);
}, 120_000);

it('without --package, run and new take the one package of your folders and refuse to guess among several', async () => {
  const project = tmp.path('default');
  mkdirSync(project);
  const db = tmp.path('default.db');
  expect((await runCli(['init-package', 'notes', '--no-config'], { db, cwd: project })).code).toBe(0);
  const run = await runCli(['run', '--packages', 'packages', '--request', 'Notes on tides'], { db, cwd: project });
  expect(run.code, run.stderr).toBe(0);
  expect(run.stdout).toContain('· package notes ·');
  expect(parseJson(await runCli(['new', '--json', '--packages', 'packages'], { db, cwd: project })).packageId).toBe('notes');

  const otherDb = tmp.path('default-two.db');
  expect((await runCli(['init-package', 'tides', '--no-config'], { db, cwd: project })).code).toBe(0);
  const refused = await runCli(['run', '--packages', 'packages'], { db: otherDb, cwd: project });
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain(
    `The packages folders of --packages (packages) hold 2 packages (notes, tides): choose one with --package, e.g. steward run --package notes --packages packages --db ${otherDb}.`,
  );
  expect(existsSync(otherDb)).toBe(false);
  // With no folder of your own, the bundled short-story as before.
  expect(parseJson(await runCli(['new', '--json'], { db: otherDb, cwd: project })).packageId).toBe('short-story');
}, 120_000);
