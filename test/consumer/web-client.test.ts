/**
 * steward/client and steward/react as an installed package: the packed tarball installed
 * into an empty app (the install test/support/tarball.ts shares between the test files), react
 * and the types added with npm, then `tsc --strict` compiles a page's code (test/consumer/web) in a NodeNext, a Bundler and a
 * DOM-only project (no Node types, every declaration file checked), and esbuild bundles the
 * installed steward/client for the browser with no Node built-in.
 */
import { cpSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { browserBundle } from '../support/browser-bundle.js';
import { root } from '../support/cli-process.js';
import { appWithSteward } from '../support/tarball.js';
import { typeCheck } from '../support/type-check.js';

let app: string;

beforeAll(async () => {
  const versions = (await import('../../package.json', { with: { type: 'json' } })).default.devDependencies;
  ({ dir: app } = await appWithSteward('steward-web-consumer-', [
    `typescript@${versions.typescript}`,
    `@types/node@${versions['@types/node']}`,
    `react@${versions.react}`,
    `@types/react@${versions['@types/react']}`,
  ]));
  cpSync(join(root, 'test/consumer/web'), app, { recursive: true });
}, 900_000);

afterAll(async () => {
  if (app) await rm(app, { recursive: true, force: true });
}, 120_000);

// The three checked by one process (type-check.ts), each test reading its project's diagnostics.
const flavours = ['nodenext', 'bundler', 'dom'];
let checked: Promise<Record<string, string>> | undefined;
it.concurrent.each(flavours)(
  'tsc --strict compiles a page on steward/client and steward/react (%s)',
  async (flavour) => {
    checked ??= typeCheck(
      app,
      flavours.map((f) => `tsconfig.${f}.json`),
    );
    expect((await checked)[`tsconfig.${flavour}.json`]).toBe('');
  },
  // The whole check, however busy the machine.
  300_000,
);

it('esbuild bundles the installed steward/client and steward/react for the browser with no Node built-in', async () => {
  const result = await browserBundle({ stdin: "export * from 'steward/client'; export * from 'steward/react';" }, { absWorkingDir: app });
  expect(result.reached).toEqual([]);
  expect(result.bytes).toBeGreaterThan(50_000);
});
