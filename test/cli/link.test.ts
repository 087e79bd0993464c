/**
 * `steward link`: a decision link printed by the CLI from the store, signed with the secret a
 * `steward serve` of the same store has, is taken by that server: its decision is journalled
 * as the recipient's via the link. Without the secret the command says how to give it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DemoModel } from '../../src/models/demo-model.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import { startServe, type ServeHandle } from '../../src/serve/server.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { client } from '../serve/http.js';
import { parseJson, runCli } from '../support/cli-process.js';

const CLI_TIMEOUT = 90_000;
const SECRET = 'cli-link-secret-0123456789abcdef0123456789abcdef';
const TOKEN = 'cli-link-token-0123456789';

let dir: string;
let db: string;
let store: SqliteStore;
let server: ServeHandle;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'steward-link-'));
  db = join(dir, 'steward.db');
  store = new SqliteStore(db);
  server = await startServe({ runtime: createRuntime({ model: new DemoModel(), store }), store, port: 0, log: () => {}, token: TOKEN, linkSecret: SECRET });
});
afterAll(async () => {
  await server?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('steward link', () => {
  it(
    'prints a link the serve of the same store and secret takes; without the secret it says how to give it',
    async () => {
      const http = client(server.url, TOKEN);
      const id: string = (await http.post('/sessions', { packageId: 'tiny' })).body.view.id;
      const view = (await http.post(`/sessions/${id}/events`, { type: 'user_submitted_input', text: 'A note.' })).body.view;
      expect(view.waitingReason).toBe('approve_step');

      const missing = await runCli(['link', id, '--to', 'alice', '--public-url', server.url], { db });
      expect(missing.code).toBe(1);
      expect(missing.stderr).toMatch(/STEWARD_LINK_SECRET/);

      const printed = await runCli(['link', id, '--to', 'alice', '--public-url', server.url, '--expires', '2h', '--json'], {
        db,
        env: { STEWARD_LINK_SECRET: SECRET },
      });
      expect(printed.stderr).toBe('');
      const link = parseJson<{ url: string; linkId: string; wait: number; recipient: string }>(printed);
      expect(link).toMatchObject({ sessionId: id, wait: view.wait, recipient: 'alice' });
      expect(link.url.startsWith(`${server.url}/links/`)).toBe(true);

      const decided = await fetch(link.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ decision: 'approve' }) });
      expect(decided.status).toBe(200);
      await expect.poll(async () => (await http.get(`/sessions/${id}`)).body.view.wait, { timeout: 20_000 }).not.toBe(view.wait);
      const entries = (await http.get(`/sessions/${id}/journal?limit=1000`)).body.entries as { type: string; payload: Record<string, unknown> }[];
      expect(entries.filter((e) => e.type === 'user_approved_next_step').map((e) => e.payload)).toEqual([
        expect.objectContaining({ by: 'alice', via: `link:${link.linkId}`, wait: view.wait }),
      ]);
    },
    CLI_TIMEOUT,
  );
});
