/**
 * The CLI decides as `admin` (it is local and holds the database): `steward send` approves a
 * step whose worker names its approvers (front matter `approvers`), and the journal records
 * the event with `groups: ['admin']`. `steward link --group` makes a link whose decision
 * carries the groups it names; a link without them is refused by such a wait.
 */
import { expect, it } from 'vitest';
import type { ViewJson } from '../../src/cli/context.js';
import { DemoModel } from '../../src/models/demo-model.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import { startServe } from '../../src/serve/server.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { parseJson, runCli } from '../support/cli-process.js';
import { useTempDir } from '../support/temp.js';
import { tinyDecidedBy } from '../support/decided-package.js';

const tmp = useTempDir('steward-cli-deciders-');

/** Each test runs several CLI processes (the first compiles the CLI): a slow machine takes its time. */
const CLI_TIMEOUT = 90_000;
const SECRET = 'cli-deciders-secret-0123456789abcdef0123456789abcdef';

/** The tiny package, its first worker's steps approved by the ops group only; its packages folder. */
function opsPackages(name: string): string {
  return tinyDecidedBy(tmp.path(name), 'ops');
}

it('approves a step only the ops group decides, as admin', { timeout: CLI_TIMEOUT }, async () => {
  const packages = opsPackages('packages');
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

it('makes a link whose decision carries the groups --group names', { timeout: CLI_TIMEOUT }, async () => {
  const packages = opsPackages('link-packages');
  const db = tmp.path('links.db');
  const store = new SqliteStore(db);
  const server = await startServe({
    runtime: createRuntime({ model: new DemoModel(), store, packagesDir: packages }),
    store,
    port: 0,
    log: () => {},
    linkSecret: SECRET,
  });
  try {
    const cli = (...args: string[]) => runCli([...args, '--packages', packages], { db, env: { STEWARD_LINK_SECRET: SECRET } });
    const id = parseJson<ViewJson>(await cli('new', '--package', 'tiny', '--json')).id;
    expect(parseJson<ViewJson>(await cli('send', id, 'input', '--text', 'A note.', '--json')).waitingReason).toBe('approve_step');
    const link = async (...extra: string[]) =>
      parseJson<{ url: string; groups?: string[] }>(await cli('link', id, '--to', 'olga', '--public-url', server.url, '--json', ...extra));
    const approve = (url: string) =>
      fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ decision: 'approve' }) });

    const plain = await link();
    expect(plain.groups).toBeUndefined();
    const refused = await approve(plain.url);
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('not_a_decider');

    const ops = await link('--group', 'ops');
    expect(ops.groups).toEqual(['ops']);
    expect((await approve(ops.url)).status).toBe(200);
    const approved = (await store.journal(id)).filter((e) => e.type === 'user_approved_next_step').at(-1)?.payload;
    expect(approved).toMatchObject({ by: 'olga', groups: ['ops'], through: 'link' });
  } finally {
    await server.close();
    await store.close();
  }
});
