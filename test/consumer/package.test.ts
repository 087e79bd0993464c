/**
 * Steward as an installed package: `npm run package` (scripts/pack.mjs), a plain `npm install`
 * of the tarball into an empty app (npm registry only, preferring the local cache; the install
 * test/support/tarball.ts shares between the test files), typescript, react and their types
 * added with npm, then use it as an app would:
 *   (a) an ESM script imports `steward` and runs a scripted session to a wait;
 *   (b) `tsc --strict` compiles a TypeScript consumer with moduleResolution NodeNext and
 *       Bundler, and a DOM-only project (no Node types) against steward/machine + testing;
 *       and a page's code on steward/client and steward/react (test/consumer/web, in the
 *       app's web/) as NodeNext, Bundler and DOM-only projects;
 *   (c) esbuild bundles steward/machine, and steward/client + steward/react, for
 *       `platform: 'browser'`: no Node built-in;
 *   (d) `npx steward packages` (and `diagram`) run the installed, compiled CLI;
 *   (e) README's Quick start job, `npx steward run` on the demo model, runs to done on the
 *       SQLite store a plain install brings (better-sqlite3, an optional dependency, set up by
 *       its own install script: from the repository's built binary offered as its prebuilt
 *       one, or compiled when that does not fit; see test/support/sqlite-prebuild.ts);
 *   (f) an app installed with `--omit=optional` (no better-sqlite3): `steward run` fails with
 *       the fix in its message and leaves no `.steward/` behind.
 * Prints the tarball's size and file count, the install times and the bundle size.
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserBundle } from '../support/browser-bundle.js';
import { root } from '../support/cli-process.js';
import { appWithSteward, installedSteward, npmInstall, packedTarball, type Tarball } from '../support/tarball.js';
import { typeCheck } from '../support/type-check.js';

const run = promisify(execFile);
const fixtures = join(root, 'test/consumer/app');
/** The page's code on steward/client and steward/react, copied to the app's web/. */
const webFixtures = join(root, 'test/consumer/web');

let tarball: Tarball;
let app: string;
/**
 * The same install after `npm install --omit=optional`: as where better-sqlite3 cannot be built.
 * Made from a copy of the shared install, from which npm removes the optional package: the same
 * node_modules as an install with `--omit=optional` from the start, without unpacking every
 * package again.
 */
let bare: string;
/** The environment of a command an app runs: no OPENAI_* setting, so the demo model answers. */
const demoEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OPENAI_')));

beforeAll(async () => {
  tarball = await packedTarball();
  const versions = (await import('../../package.json', { with: { type: 'json' } })).default.devDependencies;
  const [shared, added, bareMs] = await Promise.all([
    installedSteward(),
    appWithSteward('steward-consumer-', [
      `typescript@${versions.typescript}`,
      `@types/node@${versions['@types/node']}`,
      `react@${versions.react}`,
      `@types/react@${versions['@types/react']}`,
    ]),
    appWithSteward('steward-consumer-bare-').then(async (copy) => {
      bare = copy.dir;
      const ms = await npmInstall(bare, ['--omit=optional']);
      if (existsSync(join(bare, 'node_modules/better-sqlite3'))) throw new Error('npm install --omit=optional left better-sqlite3 in the copied app');
      return ms;
    }),
  ]);
  app = added.dir;
  cpSync(fixtures, app, { recursive: true });
  cpSync(webFixtures, join(app, 'web'), { recursive: true });
  readmeBlocks().forEach((code, i) => writeFileSync(join(app, `readme-${i + 1}.ts`), code));
  console.log(
    `tarball: ${(tarball.size / 1024).toFixed(1)} kB packed, ${(tarball.unpackedSize / 1024).toFixed(1)} kB unpacked, ${tarball.entryCount} files; ` +
      `npm install of it into an empty app (better-sqlite3 ${shared.prebuilt ? "from the repository's binary" : 'built from source'}; shared by the test files): ${(shared.ms / 1000).toFixed(1)} s; ` +
      `typescript, react and their types added: ${(added.ms / 1000).toFixed(1)} s; npm install --omit=optional on a copy of it: ${(bareMs / 1000).toFixed(1)} s`,
  );
}, 900_000);

/** The TypeScript blocks of README's "Use it from code", compiled and run by a test below. */
function readmeBlocks(): string[] {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Use it from code'), readme.indexOf('\n## ', readme.indexOf('## Use it from code') + 1));
  return [...section.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

// Every TypeScript project of the app, checked by one process (type-check.ts) that reads the
// declaration files they share once; each test reads its projects' diagnostics.
// nodenext and bundler: an app's usual settings (skipLibCheck); dom: every declaration
// file is checked, so a Node type anywhere in steward/machine's or steward/testing's fails it.
// libcheck: nodenext with skipLibCheck false and every entry imported, so a declaration that
// needs a type package the app does not have (e.g. @types/better-sqlite3) fails it. Both leave
// TypeScript's own lib files unchecked (skipDefaultLibCheck): they are not Steward's, and each
// project checked lib.dom.d.ts and the ES libs again.
const flavours = ['nodenext', 'bundler', 'dom', 'libcheck'];
// The page: the same three settings (its dom project: no Node type in what steward/client or
// steward/react declares).
const webFlavours = ['nodenext', 'bundler', 'dom'];
/** README's blocks, compiled (emitted to readme-out/) by the same process. */
const README_PROJECT = 'tsconfig.readme.json';
let checked: Promise<Record<string, string>> | undefined;
/** What tsc says of each project, checked once, by the first test that asks. */
function checks(): Promise<Record<string, string>> {
  checked ??= typeCheck(app, [...flavours.map((f) => `tsconfig.${f}.json`), ...webFlavours.map((f) => `web/tsconfig.${f}.json`), README_PROJECT]);
  return checked;
}

afterAll(async () => {
  for (const dir of [app, bare]) if (dir) await rm(dir, { recursive: true, force: true });
}, 120_000);

describe('the packed tarball', () => {
  it('ships the compiled code, its declarations, the skill packages and the inspector page, and no tests or sources', () => {
    const files = tarball.files;
    for (const f of [
      'package.json',
      'bin/steward.mjs',
      'dist/index.js',
      'dist/index.d.ts',
      'dist/machine.js',
      'dist/machine.d.ts',
      'dist/testing.js',
      'dist/testing.d.ts',
      'dist/inspect.js',
      'dist/inspect.d.ts',
      'dist/cli/main.js',
      'dist/cli/bundle/main.js',
      'dist/skills/packages/tiny/manifest.json',
      'dist/inspector/index.html',
      'docs/package-format.md',
    ]) {
      expect(files, f).toContain(f);
    }
    // Every entry package.json declares, with its declarations.
    const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, string | Record<string, string>> };
    const declared = Object.values(manifest.exports).flatMap((target) => (typeof target === 'string' ? [target] : Object.values(target)));
    expect(declared).toContain('./dist/store.d.ts');
    for (const f of declared) expect(files, f).toContain(f.replace(/^\.\//, ''));
    expect(files.filter((f) => /^(test|bench|src|examples|scripts)\//.test(f) || (f.endsWith('.ts') && !f.endsWith('.d.ts')))).toEqual([]);
    // The repository's record of its build (scripts/build-inputs.mjs) stays there.
    expect(files).not.toContain('dist/build-stamp.json');
  });

  it('every relative link in README resolves in the repository and in the tarball (the design, the tool contract, the format page ship)', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const targets = [...readme.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!.split('#')[0]!).filter((t) => t && !/^[a-z]+:/i.test(t));
    expect(targets.length).toBeGreaterThan(3);
    for (const target of new Set(targets)) {
      expect(existsSync(join(root, target)), `${target} in the repository`).toBe(true);
      expect(
        tarball.files.some((f) => f === target || f.startsWith(`${target.replace(/\/$/, '')}/`)),
        `${target} in the tarball`,
      ).toBe(true);
    }
  });

  it('ships a package.json that runs nothing of the repository on install: no scripts, no devDependencies, no workspaces', async () => {
    const { stdout } = await run('tar', ['-xzOf', tarball.file, 'package/package.json']);
    const manifest = JSON.parse(stdout) as Record<string, unknown>;
    expect(manifest.scripts).toBeUndefined();
    expect(manifest.devDependencies).toBeUndefined();
    // The repository's workspace (bench/load) is not shipped.
    expect(manifest.workspaces).toBeUndefined();
    expect(manifest.optionalDependencies).toEqual({ 'better-sqlite3': expect.stringMatching(/^12\./) });
    // react only for steward/react, the MCP filesystem server only for the bundled file-notes package; both optional: npm installs neither.
    expect(manifest.peerDependencies).toEqual({ react: expect.any(String), '@modelcontextprotocol/server-filesystem': expect.any(String) });
    expect(manifest.peerDependenciesMeta).toEqual({ react: { optional: true }, '@modelcontextprotocol/server-filesystem': { optional: true } });
  });

  it('a plain install brings better-sqlite3 (an optional dependency), built and loadable, and no tsx', async () => {
    const { stdout } = await run('npm', ['ls', '--all', '--parseable'], { cwd: app, maxBuffer: 16 << 20 }).catch((e: { stdout: string }) => e);
    expect(stdout).toMatch(/node_modules\/better-sqlite3$/m);
    expect(stdout).not.toMatch(/node_modules\/tsx$/m);
    const loaded = await run(
      process.execPath,
      ['--input-type=module', '-e', "import D from 'better-sqlite3'; console.log(new D(':memory:').prepare('select 7 as n').get().n);"],
      {
        cwd: app,
      },
    );
    expect(loaded.stdout.trim()).toBe('7');
  });
});

describe('an app that installed steward', () => {
  it('(a) an ESM script runs a scripted session to a wait', async () => {
    const { stdout } = await run(process.execPath, ['run-session.mjs'], { cwd: app });
    expect(JSON.parse(stdout)).toEqual({
      state: 'waiting_user.approve_step',
      waitingReason: 'approve_step',
      pendingStep: 'echo',
      enabled: ['user_approved_next_step', 'user_rejected_next_step'],
    });
  });

  it.concurrent.each(flavours)(
    '(b) tsc --strict compiles the consumer (%s)',
    async (flavour) => {
      expect((await checks())[`tsconfig.${flavour}.json`]).toBe('');
    },
    // The whole check, however busy the machine.
    300_000,
  );

  it.concurrent.each(webFlavours)(
    '(b) tsc --strict compiles a page on steward/client and steward/react (%s)',
    async (flavour) => {
      expect((await checks())[`web/tsconfig.${flavour}.json`]).toBe('');
    },
    300_000,
  );

  it.each([
    ['everything steward/machine exports + ScriptedModel', 'browser-entry.js'],
    ['a typical page: sessionMachine, the turns, enabledUserEvents, sessionView', 'browser-typical.js'],
  ])('(c) esbuild bundles %s for the browser with no Node built-in', async (what, entry) => {
    const { reached, bytes, gzipped } = await browserBundle({ entry }, { absWorkingDir: app });
    expect(reached).toEqual([]);
    console.log(`browser bundle of ${what}: ${(bytes / 1024).toFixed(1)} kB minified, ${(gzipped / 1024).toFixed(1)} kB gzipped`);
    expect(bytes).toBeGreaterThan(10_000);
  });

  it('(c) esbuild bundles the installed steward/client and steward/react for the browser with no Node built-in', async () => {
    const result = await browserBundle({ stdin: "export * from 'steward/client'; export * from 'steward/react';" }, { absWorkingDir: app });
    expect(result.reached).toEqual([]);
    expect(result.bytes).toBeGreaterThan(50_000);
  });

  // Two npx starts (npm itself, then the command each): several seconds each on a busy machine.
  it('(d) npx steward packages runs the installed CLI', async () => {
    const { stdout } = await run('npx', ['--no-install', 'steward', 'packages', '--json'], { cwd: app });
    expect((JSON.parse(stdout) as { id: string }[]).map((p) => p.id).sort()).toEqual(['file-notes', 'research-brief', 'short-story', 'tiny']);
    // Steward's own machine comes from the compiled dist/ (no src/ is shipped, no tsx is needed).
    const diagram = await run('npx', ['--no-install', 'steward', 'diagram', '--format', 'mermaid'], { cwd: app });
    expect(diagram.stdout).toMatch(/^stateDiagram-v2\n/);
    expect(diagram.stdout).toContain('waiting_user');
  }, 60_000);

  it('README\'s "Use it from code" examples compile (tsc --strict) and run', async () => {
    // Written to the app before the check (beforeAll).
    const blocks = readmeBlocks();
    expect(blocks.length).toBe(5);
    expect((await checks())[README_PROJECT]).toBe('');
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OPENAI_')));
    const outputs = await Promise.all(blocks.map((_, i) => run(process.execPath, [`readme-out/readme-${i + 1}.js`], { cwd: app, env })));
    expect(outputs[0]!.stdout).toContain('waiting_user.approve_step');
    expect(outputs[1]!.stdout).toContain('waiting_user.approve_step');
    expect(outputs[2]!.stdout).toMatch(/transitions covered: (\d+)\/\1 /);
    // A fan-out: three steps approved one by one, by item, then on to the end.
    expect(outputs[3]!.stdout).toMatch(/approve fact-finder \(item \S+\)\napprove angle-finder \(item \S+\)\napprove risk-finder \(item \S+\)\n/);
    expect(outputs[3]!.stdout).toContain('done');
    // The live events: one line per round with its tokens and tools, then the wait.
    expect(outputs[4]!.stdout).toContain('manager 1/12');
    expect(outputs[4]!.stdout).toContain('waits: approve_step');
    // As the (b) tests: this one makes the whole check when it runs alone.
  }, 300_000);

  it("import 'steward' (the installed, compiled package) loads no HTTP or WebSocket module; steward/inspect does", async () => {
    const loadedBy = async (entry: string) => {
      const log = join(app, `modules-${entry.replace('/', '-')}.log`);
      await run(process.execPath, ['--import', join(root, 'test/api/record-modules.mjs'), '--input-type=module', '-e', `await import('${entry}');`], {
        cwd: app,
        env: { ...process.env, STEWARD_MODULE_LOG: log },
      });
      return readFileSync(log, 'utf8')
        .split('\n')
        .filter((url) => /node_modules\/(hono|@hono\/node-server|ws|@statelyai\/inspect)\/|^node:(http|https|http2|net)$/.test(url));
    };
    expect(await loadedBy('steward')).toEqual([]);
    expect((await loadedBy('steward/inspect')).length).toBeGreaterThan(0);
  });

  it("(e) README's Quick start job: npx steward run on the demo model reaches done, saved in .steward/steward.db", async () => {
    const work = mkdtempSync(join(app, 'quick-start-'));
    const { stdout } = await run('npx', ['--no-install', 'steward', 'run'], { cwd: work, env: demoEnv, maxBuffer: 16 << 20 });
    const id = /Session (s_\w+) is done/.exec(stdout)?.[1];
    expect(id, stdout.slice(-2000)).toBeTruthy();
    expect(existsSync(join(work, '.steward/steward.db'))).toBe(true);
    const shown = await run('npx', ['--no-install', 'steward', 'show', id!, '--json'], { cwd: work, env: demoEnv });
    expect((JSON.parse(shown.stdout) as { state: string }).state).toBe('done');
  }, 120_000);
});

describe('an app installed without better-sqlite3 (--omit=optional)', () => {
  it('(f) npx steward run fails naming the fix, and leaves no .steward/ behind', async () => {
    const result = await run('npx', ['--no-install', 'steward', 'run'], { cwd: bare, env: demoEnv }).then(
      () => ({ code: 0, stderr: '' }),
      (e: { code: number; stderr: string }) => e,
    );
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('npm install better-sqlite3@12');
    expect(result.stderr).toContain('postgres://');
    expect(existsSync(join(bare, '.steward'))).toBe(false);
  }, 60_000);

  it('says how to get better-sqlite3 when a SqliteStore is asked for from code, and creates no folder', async () => {
    const script = "import { SqliteStore } from 'steward'; try { new SqliteStore('data/x.db'); } catch (e) { console.log(e.code, e.message); }";
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: bare });
    expect(stdout).toContain('user_error');
    expect(stdout).toContain('npm install better-sqlite3@12');
    expect(existsSync(join(bare, 'data'))).toBe(false);
  });
});
