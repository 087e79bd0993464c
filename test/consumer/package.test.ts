/**
 * Steward as an installed package: `npm pack`, install the tarball into an empty app (npm
 * registry only, preferring the local cache), then use it as an app would:
 *   (a) an ESM script imports `steward` and runs a scripted session to a wait;
 *   (b) `tsc --strict` compiles a TypeScript consumer with moduleResolution NodeNext and
 *       Bundler, and a DOM-only project (no Node types) against steward/machine + testing;
 *   (c) esbuild bundles steward/machine for `platform: 'browser'`: no Node built-in;
 *   (d) `npx steward packages` (and `diagram`) run the installed, compiled CLI.
 * Prints the tarball's size and file count, the install time and the bundle size.
 */
import { execFile } from 'node:child_process';
import { builtinModules } from 'node:module';
import { cpSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { root } from '../support/cli-process.js';
import { npmInstall, packedTarball, type Tarball } from '../support/tarball.js';

const run = promisify(execFile);
const tsc = join(root, 'node_modules/typescript/bin/tsc');
const fixtures = join(root, 'test/consumer/app');

let tarball: Tarball;
let app: string;

beforeAll(async () => {
  tarball = await packedTarball();
  app = mkdtempSync(join(tmpdir(), 'steward-consumer-'));
  cpSync(fixtures, app, { recursive: true });
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }, null, 2));
  const versions = (await import('../../package.json', { with: { type: 'json' } })).default.devDependencies;
  const ms = await npmInstall(app, [tarball.file, `typescript@${versions.typescript}`, `@types/node@${versions['@types/node']}`]);
  console.log(
    `tarball: ${(tarball.size / 1024).toFixed(1)} kB packed, ${(tarball.unpackedSize / 1024).toFixed(1)} kB unpacked, ${tarball.entryCount} files; ` +
      `install into an empty app (with typescript + @types/node): ${(ms / 1000).toFixed(1)} s`,
  );
}, 300_000);

afterAll(async () => {
  if (app) await rm(app, { recursive: true, force: true });
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
      'dist/skills/packages/tiny/manifest.json',
      'dist/inspector/index.html',
      'docs/package-format.md',
    ]) {
      expect(files, f).toContain(f);
    }
    expect(files.filter((f) => /^(test|bench|src|examples|scripts)\//.test(f) || (f.endsWith('.ts') && !f.endsWith('.d.ts')))).toEqual([]);
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

  it('installs without better-sqlite3 (an optional peer) or tsx', async () => {
    const { stdout } = await run('npm', ['ls', '--all', '--parseable'], { cwd: app, maxBuffer: 16 << 20 }).catch((e: { stdout: string }) => e);
    expect(stdout).not.toMatch(/node_modules\/better-sqlite3$/m);
    expect(stdout).not.toMatch(/node_modules\/tsx$/m);
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

  // nodenext and bundler: an app's usual settings (skipLibCheck); dom: every declaration
  // file is checked, so a Node type anywhere in steward/machine's or steward/testing's fails it.
  it.concurrent.each(['nodenext', 'bundler', 'dom'])(
    '(b) tsc --strict compiles the consumer (%s)',
    async (flavour) => {
      const result = await run(process.execPath, [tsc, '-p', `tsconfig.${flavour}.json`], { cwd: app }).catch((e: { stdout: string }) => e);
      expect(result.stdout).toBe('');
    },
    120_000,
  );

  it.each([
    ['everything steward/machine exports + ScriptedModel', 'browser-entry.js'],
    ['a typical page: sessionMachine, the turns, enabledUserEvents, sessionView', 'browser-typical.js'],
  ])('(c) esbuild bundles %s for the browser with no Node built-in', async (what, entry) => {
    const nodeBuiltins = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);
    const reached: string[] = [];
    const result = await build({
      absWorkingDir: app,
      entryPoints: [entry],
      bundle: true,
      platform: 'browser',
      format: 'esm',
      minify: true,
      write: false,
      logLevel: 'silent',
      plugins: [
        {
          name: 'no-node-builtins',
          setup(b) {
            b.onResolve({ filter: /.*/ }, (args) => {
              if (nodeBuiltins.has(args.path)) reached.push(`${args.path} (from ${args.importer})`);
              return undefined;
            });
          },
        },
      ],
    });
    expect(reached).toEqual([]);
    expect(result.errors).toEqual([]);
    const code = result.outputFiles[0]!.contents;
    console.log(`browser bundle of ${what}: ${(code.length / 1024).toFixed(1)} kB minified, ${(gzipSync(code).length / 1024).toFixed(1)} kB gzipped`);
    expect(code.length).toBeGreaterThan(10_000);
  });

  it('(d) npx steward packages runs the installed CLI', async () => {
    const { stdout } = await run('npx', ['--no-install', 'steward', 'packages', '--json'], { cwd: app });
    expect((JSON.parse(stdout) as { id: string }[]).map((p) => p.id).sort()).toEqual(['short-story', 'tiny']);
    // Steward's own machine comes from the compiled dist/ (no src/ is shipped, no tsx is needed).
    const diagram = await run('npx', ['--no-install', 'steward', 'diagram', '--format', 'mermaid'], { cwd: app });
    expect(diagram.stdout).toMatch(/^stateDiagram-v2\n/);
    expect(diagram.stdout).toContain('waiting_user');
  });

  it('README\'s "Use it from code" examples compile (tsc --strict) and run', async () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## Use it from code'), readme.indexOf('\n## ', readme.indexOf('## Use it from code') + 1));
    const blocks = [...section.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
    expect(blocks.length).toBe(4);
    blocks.forEach((code, i) => writeFileSync(join(app, `readme-${i + 1}.ts`), code));
    const compiled = await run(process.execPath, [tsc, '-p', 'tsconfig.readme.json'], { cwd: app }).catch((e: { stdout: string }) => e);
    expect(compiled.stdout).toBe('');
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OPENAI_')));
    const outputs = await Promise.all(blocks.map((_, i) => run(process.execPath, [`readme-out/readme-${i + 1}.js`], { cwd: app, env })));
    expect(outputs[0]!.stdout).toContain('waiting_user.approve_step');
    expect(outputs[1]!.stdout).toContain('waiting_user.approve_step');
    expect(outputs[2]!.stdout).toMatch(/transitions covered: (\d+)\/\1 /);
    // The live events: one line per round with its tokens and tools, then the wait.
    expect(outputs[3]!.stdout).toContain('manager 1/12');
    expect(outputs[3]!.stdout).toContain('waits: approve_step');
  }, 120_000);

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

  it('says how to get better-sqlite3 when a SqliteStore is asked for without it', async () => {
    const script = "import { SqliteStore } from 'steward'; try { new SqliteStore('x.db'); } catch (e) { console.log(e.code, e.message); }";
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: app });
    expect(stdout).toContain('user_error');
    expect(stdout).toContain('npm install better-sqlite3');
  });
});
