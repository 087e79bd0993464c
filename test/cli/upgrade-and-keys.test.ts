/**
 * `steward send --key` and `steward upgrade` as a person runs them: the same send twice with
 * one key journals one event; a session keeps the package version it started on, `show`
 * says when the package on disk is newer, and `upgrade` moves it there, journalled.
 */
import { mkdirSync } from 'node:fs';
import { expect, it } from 'vitest';
import { parseJson, runCli } from '../support/cli-process.js';
import { copyTiny, editEchoPrompt } from '../support/pinning.js';
import { useTempDir } from '../support/temp.js';

const tmp = useTempDir('steward-upgrade-cli-');

it('send --key counts once; show names the pinned version and a newer one on disk; upgrade journals both hashes', async () => {
  const packages = tmp.path('packages');
  mkdirSync(packages);
  copyTiny(packages);
  const db = tmp.path('cli.db');
  const cli = (...args: string[]) => runCli([...args, '--packages', packages], { db });
  const created = await cli('new', '--package', 'tiny');
  expect(created.code, created.stderr).toBe(0);
  const id = created.stdout.trim();
  const journal = async () => parseJson<Array<{ type: string; payload: { from?: string; to?: string } }>>(await cli('log', id, '--format', 'json'));

  const first = await cli('send', id, 'input', '--text', 'A ghost story.', '--key', 'cli-key-1');
  expect(first.code, first.stderr).toBe(0);
  const entries = (await journal()).length;
  const again = await cli('send', id, 'input', '--text', 'A ghost story.', '--key', 'cli-key-1');
  expect(again.code, again.stderr).toBe(0);
  expect(again.stderr).toContain('nothing was sent again');
  expect((await journal()).length).toBe(entries);

  editEchoPrompt(packages);
  const shown = await cli('show', id);
  expect(shown.stdout).toMatch(/Package version: sha256:[0-9a-f]{12} \(pinned\); the package on disk is newer \(sha256:[0-9a-f]{12}\)/);
  const upgraded = await cli('upgrade', id, '--json');
  expect(upgraded.code, upgraded.stderr).toBe(0);
  const result = parseJson<{ from: string; to: string; changed: boolean }>(upgraded);
  expect(result.changed).toBe(true);
  expect(result.from).not.toBe(result.to);
  expect((await journal()).at(-1)).toMatchObject({ type: 'package_upgraded', payload: { from: result.from, to: result.to } });
  expect((await cli('show', id)).stdout).not.toContain('newer');
}, 180_000);
