/** `steward serve` reads STEWARD_TOKENS_FILE: a bad line stops it before it listens; a good list makes `by` the token's name. */
import { writeFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { runCli, startCli, until } from '../support/cli-process.js';
import { useTempDir } from '../support/temp.js';
import { client } from './http.js';

const tmp = useTempDir('steward-serve-tokens-cli-');
const ALICE = 'alice-0123456789abcdef';

it('refuses a bad token file, naming the line; serves with a good one', async () => {
  const db = tmp.path('serve.db');
  const file = tmp.path('tokens');
  writeFileSync(file, `alice ${ALICE}\nsystem ${'s'.repeat(20)}\n`);
  const bad = await runCli(['serve', '--port', '0'], { db, env: { STEWARD_TOKENS_FILE: file } });
  expect(bad.code).toBe(1);
  expect(bad.stderr).toContain(`STEWARD_TOKENS_FILE ${file} is not a valid token list:\n  line 2: the name is reserved`);
  expect((await runCli(['serve', '--port', '0'], { db, env: { STEWARD_TOKENS_FILE: file, STEWARD_TOKEN: ALICE } })).stderr).toContain(
    'STEWARD_TOKENS_FILE and STEWARD_TOKEN are both set',
  );

  writeFileSync(file, `alice ${ALICE}\n`);
  let id = '';
  const cli = startCli(['serve', '--port', '0'], { db, env: { STEWARD_TOKENS_FILE: file }, timeoutMs: 60_000 });
  try {
    const base = await until(() => /Steward serve on (http:\/\/127\.0\.0\.1:\d+)/.exec(cli.stdout)?.[1], 'the server URL', 30_000);
    expect(cli.stdout).toContain("named tokens required (1: by is the token's name)");
    const http = client(base, ALICE);
    id = (await http.post('/sessions', { packageId: 'tiny' })).body.view.id;
    expect((await http.post(`/sessions/${id}/events`, { type: 'user_submitted_input', by: 'bob', text: 'Green tea.' })).status).toBe(403);
    expect((await http.post(`/sessions/${id}/events`, { type: 'user_submitted_input', text: 'Green tea.' })).status).toBe(200);
  } finally {
    cli.child.kill('SIGTERM');
    await cli.result;
  }
  const store = new SqliteStore(db);
  try {
    expect((await store.journal(id)).filter((e) => e.kind === 'event').map((e) => (e.payload as { by?: string }).by)).toEqual(['alice']);
  } finally {
    await store.close();
  }
}, 90_000);
