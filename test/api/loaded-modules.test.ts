/**
 * What `import 'steward'` costs: the root entry (and the browser-safe ones, and the CLI
 * before a command needs the inspector or the server) loads no HTTP or WebSocket module.
 * hono, @hono/node-server, ws, @statelyai/inspect and node:http come only with
 * `steward/inspect` or `steward/serve`; the `openai` SDK only with an OpenAIModel's first
 * call. Checked in a fresh Node process whose module hook (record-modules.mjs) lists every
 * module it loads. The process loads the compiled sources (test/support/cli-build.ts): each
 * module compiled on its own, as tsx would at each start, so the same modules import the same.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect, it } from 'vitest';
import { compiledPackage } from '../support/cli-build.js';
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

const OPENAI = /[\\/]node_modules[\\/]openai[\\/]/;

/** The HTTP and WebSocket modules (and, with `also`, those it matches) a fresh process loaded while it ran `code`. */
function networkModulesAfter(name: string, code: string, also: RegExp[] = []): string[] {
  const log = tmp.path(`${name}.log`);
  const child = spawnSync(process.execPath, ['--import', join(root, 'test/api/record-modules.mjs'), '--input-type=module', '-e', code], {
    cwd: compiledPackage(),
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, STEWARD_MODULE_LOG: log },
  });
  if (child.status !== 0) throw new Error(`the child failed (exit ${child.status}):\n${child.stdout}\n${child.stderr}`);
  const loaded = readFileSync(log, 'utf8').split('\n').filter(Boolean);
  expect(
    loaded.some((url) => url.startsWith(pathToFileURL(join(compiledPackage(), 'dist/')).href)),
    `nothing of Steward was loaded:\n${loaded.join('\n')}`,
  ).toBe(true);
  const watched = [...NETWORK, ...also];
  return [...new Set(loaded.filter((url) => watched.some((re) => re.test(url))).map((url) => url.replace(/^.*node_modules[\\/]/, '')))];
}

it('steward, steward/machine, steward/testing and the CLI load no HTTP or WebSocket module', () => {
  // One process for all of them: a module stays loaded, so one that any of them loads is in the
  // process's list, and an empty list clears each (the entries' own lists would only be smaller).
  // Nor the openai SDK: steward exports OpenAIModel, which imports it on its first call.
  // The CLI loads the inspector and the server only in the commands that start them.
  const all =
    "const { OpenAIModel } = await import('./dist/index.js'); new OpenAIModel({ model: 'm', apiKey: 'k', baseURL: 'http://127.0.0.1:9/v1' });" +
    " await import('./dist/machine.js'); await import('./dist/testing.js'); await import('./dist/cli/main.js');";
  expect(networkModulesAfter('entries', all, [OPENAI])).toEqual([]);
}, 120_000);

it("an OpenAIModel's first call loads the openai SDK: the check sees it when it is there", () => {
  // A call cancelled before it starts: nothing goes on the wire, but the SDK is loaded to tell its errors apart.
  const called =
    "const { OpenAIModel } = await import('./dist/index.js'); const model = new OpenAIModel({ model: 'm', apiKey: 'k', baseURL: 'http://127.0.0.1:9/v1' });" +
    ' await model.complete({ messages: [], tools: [], signal: AbortSignal.abort() }).catch(() => {});';
  expect(networkModulesAfter('openai-called', called, [OPENAI]).some((m) => m.startsWith('openai/'))).toBe(true);
}, 60_000);

it('steward/inspect does: the check sees them when they are there', () => {
  const loaded = networkModulesAfter('inspect', "await import('./dist/inspect.js');");
  for (const expected of [/^hono\//, /^@hono\/node-server\//, /^ws\//, /^@statelyai\/inspect\//]) {
    expect(
      loaded.some((m) => expected.test(m)),
      `${expected} in ${loaded.join(', ')}`,
    ).toBe(true);
  }
}, 60_000);
