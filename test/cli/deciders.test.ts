/**
 * The CLI decides as `admin` (it is local and holds the database): `steward send` approves a
 * step whose worker names its approvers (front matter `approvers`), and the journal records
 * the event with `groups: ['admin']`.
 */
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import type { ViewJson } from '../../src/cli/context.js';
import { bundledPackagesDir } from '../../src/skills/index.js';
import { parseJson, runCli } from '../support/cli-process.js';
import { useTempDir } from '../support/temp.js';

const tmp = useTempDir('steward-cli-deciders-');

it('approves a step only the ops group decides, as admin', async () => {
  const packages = tmp.path('packages');
  cpSync(join(bundledPackagesDir, 'tiny'), join(packages, 'tiny'), { recursive: true });
  const echo = join(packages, 'tiny', 'workers', 'echo.md');
  writeFileSync(echo, readFileSync(echo, 'utf8').replace('outputTags: [note]\n', 'outputTags: [note]\napprovers: [ops]\n'));
  const cli = (...args: string[]) => runCli([...args, '--packages', packages], { db: tmp.path('deciders.db') });

  const id = parseJson<ViewJson>(await cli('new', '--package', 'tiny', '--json')).id;
  expect(parseJson<ViewJson>(await cli('send', id, 'input', '--text', 'A note about green tea', '--json')).waitingReason).toBe('approve_step');
  const approved = await cli('send', id, 'approve', '--json');
  expect(approved.code, approved.stderr).toBe(0);
  expect(parseJson<ViewJson>(approved).waitingReason).not.toBe('approve_step');
  const log = await cli('log', id, '--format', 'jsonl');
  const approve = log.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { type: string; event: { groups?: string[] } })
    .find((r) => r.type === 'user_approved_next_step');
  expect(approve?.event.groups).toEqual(['admin']);
});
