/**
 * What `import 'steward'` costs: the root entry (and the browser-safe ones, and the CLI
 * before a command needs the inspector or the server) loads no HTTP or WebSocket module.
 * hono, @hono/node-server, ws, @statelyai/inspect and node:http come only with
 * `steward/inspect` or `steward/serve`. Checked in a fresh Node process whose module hook
 * (record-modules.mjs) lists every module it loads.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { root } from '../support/cli-process.js';
import { useTempDir } from '../support/temp.js';

const tmp = useTempDir('steward-loaded-modules-');

const NETWORK = [
  /[\\/]node_modules[\\/]hono[\\/]/,
  /[\\/]node_modules[\\/]@hono[\\/]node-server[\\/]/,
  /[\\/]node_modules[\\/]ws[\\/]/,
  /[\\/]node_modules[\\/]@statelyai[\\/]inspect[\\/]/,
  /^node:(http|https|http2|net)$/,
];

/** The HTTP and WebSocket modules a fresh process loaded while it ran `code`. */
function networkModulesAfter(name: string, code: string): string[] {
  const log = tmp.path(`${name}.log`);
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--import', join(root, 'test/api/record-modules.mjs'), '--input-type=module', '-e', code], {
    cwd: root,
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, STEWARD_MODULE_LOG: log },
  });
  if (child.status !== 0) throw new Error(`the child failed (exit ${child.status}):\n${child.stdout}\n${child.stderr}`);
  const loaded = readFileSync(log, 'utf8').split('\n').filter(Boolean);
  expect(
    loaded.some((url) => url.startsWith(`file://${root}/src/`)),
    `nothing of Steward was loaded:\n${loaded.join('\n')}`,
  ).toBe(true);
  return [...new Set(loaded.filter((url) => NETWORK.some((re) => re.test(url))).map((url) => url.replace(/^.*node_modules[\\/]/, '')))];
}

it('steward, steward/machine, steward/testing and the CLI load no HTTP or WebSocket module', () => {
  expect(networkModulesAfter('root', "await import('./src/index.ts');")).toEqual([]);
  expect(networkModulesAfter('machine-testing', "await import('./src/machine.ts'); await import('./src/testing.ts');")).toEqual([]);
  // The CLI loads the inspector and the server only in the commands that start them.
  expect(networkModulesAfter('cli', "await import('./src/cli/main.ts');")).toEqual([]);
}, 120_000);

it('steward/inspect does: the check sees them when they are there', () => {
  const loaded = networkModulesAfter('inspect', "await import('./src/inspect.ts');");
  for (const expected of [/^hono\//, /^@hono\/node-server\//, /^ws\//, /^@statelyai\/inspect\//]) {
    expect(
      loaded.some((m) => expected.test(m)),
      `${expected} in ${loaded.join(', ')}`,
    ).toBe(true);
  }
}, 60_000);
