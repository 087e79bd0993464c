/**
 * Dead letters where an operator sees them: `/healthz` lists them (without the receiver's URL
 * or the session), `steward webhooks dead` lists them with their session and the receiver's
 * origin and path (never its query), and `--retry ID` makes one due again. `steward serve
 * --webhook` without a secret refuses to start and says where to put one.
 */
import { writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { DemoModel } from '../../src/models/demo-model.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import { startServe } from '../../src/serve/server.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { shownReceiver } from '../../src/webhooks/receivers.js';
import { parseJson, runCli, startCli, until } from '../support/cli-process.js';
import { useTempDir } from '../support/temp.js';
import { client } from '../serve/http.js';
import { startReceiver, TEST_SECRET } from './receiver.js';

const temp = useTempDir('steward-webhook-dead-');
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

// A chat service's webhook URL carries its secret in the path (and some in the query): neither is ever shown.
const RECEIVER = 'http://127.0.0.1:9/services/do-not-print?token=do-not-print';

describe('webhook dead letters', () => {
  it('/healthz and `steward webhooks dead` show them; --retry makes one due again', { timeout: 120_000 }, async () => {
    const db = temp.path('dead.db');
    const store = new SqliteStore(db);
    cleanups.push(() => store.close());
    const runtime = createRuntime({ model: new DemoModel(), store, webhooks: [{ url: RECEIVER, secret: TEST_SECRET }] });
    // This server delivers nothing: the test decides each message's fate.
    const server = await startServe({ runtime, store, port: 0, deliverWebhooks: false, log: () => {} });
    cleanups.push(() => server.close());
    const http = client(server.url);
    const id: string = (await http.post('/sessions', { packageId: 'tiny' })).body.view.id;
    const [message] = await store.outbox.claim({ receivers: [RECEIVER], now: 0, claimMs: 1, limit: 10 });
    await store.outbox.deadLetter(message!.id, { attempts: 8, error: 'HTTP 500' });

    const health = (await http.get('/healthz')).body;
    expect(health).toMatchObject({ ok: true, webhooks: { receivers: 1, pending: 0, dead: 1 } });
    expect(health.webhooks.deadLetters).toEqual([
      { id: message!.id, type: 'session.waiting', attempts: 8, lastError: 'HTTP 500', createdAt: expect.any(String) },
    ]);
    expect(JSON.stringify(health)).not.toContain(id);
    expect(JSON.stringify(health)).not.toContain('127.0.0.1:9');

    const listed = await runCli(['webhooks', 'dead'], { db });
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(`${message!.id}  session.waiting  session ${id}  → ${shownReceiver(RECEIVER)}  8 tries, last: HTTP 500`);
    expect(shownReceiver(RECEIVER)).toMatch(/^http:\/\/127\.0\.0\.1:9\/… #[0-9a-f]{6}$/);
    expect(listed.stdout).not.toContain('do-not-print');
    const json = await runCli(['webhooks', 'dead', '--json'], { db });
    expect(parseJson(json)).toMatchObject([{ id: message!.id, sessionId: id, receiver: shownReceiver(RECEIVER) }]);
    expect(json.stdout).not.toContain('do-not-print');

    const missing = await runCli(['webhooks', 'dead', '--retry', 'msg_nope'], { db });
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain('No dead letter "msg_nope"');
    const retried = await runCli(['webhooks', 'dead', '--retry', message!.id], { db });
    expect(retried.stdout).toContain('1 dead letter(s) due again');
    expect(await store.outbox.counts()).toEqual({ pending: 1, dead: 0 });
    expect((await runCli(['webhooks', 'dead'], { db })).stdout).toBe('No dead letters.\n');
  });

  it('`steward serve --webhook-secret-file F` without --webhook sends to the URL lines of F (kept out of the process list); a file without one names the fix', async () => {
    const receiver = await startReceiver();
    cleanups.push(receiver.close);
    const secrets = temp.path('secrets.txt');
    writeFileSync(secrets, `# the receivers, each with its secret\n${receiver.url} ${TEST_SECRET}\n`);
    const cli = startCli(['serve', '--port', '0', '--webhook-secret-file', secrets, '--webhook-events', 'waiting'], { db: temp.path('file.db') });
    cleanups.push(() => cli.child.kill('SIGKILL'));
    const url = await until(() => /Steward serve on (http:\/\/127\.0\.0\.1:\d+)/.exec(cli.stdout)?.[1], `the server URL (${cli.stderr})`, 60_000);
    const id: string = (await client(url).post('/sessions', { packageId: 'tiny' })).body.view.id;
    await receiver.until(1);
    expect(receiver.received[0]).toMatchObject({ verified: true, body: { type: 'session.waiting', data: { sessionId: id } } });

    writeFileSync(secrets, `${TEST_SECRET}\n`);
    const none = await runCli(['serve', '--port', '0', '--webhook-secret-file', secrets], { db: temp.path('file.db') });
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('need a receiver: a line "URL whsec_…" in the secret file (kept out of the process list), or --webhook URL');
  });

  it('`steward serve --webhook` without a secret refuses to start, naming where a secret goes', async () => {
    const result = await runCli(['serve', '--port', '0', '--webhook', 'http://127.0.0.1:9/hook'], { db: temp.path('nosecret.db') });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('set STEWARD_WEBHOOK_SECRET=whsec_… or pass --webhook-secret-file PATH');
    const bad = await runCli(['serve', '--port', '0', '--webhook', 'http://127.0.0.1:9/hook', '--webhook-events', 'waiting,lunch'], {
      db: temp.path('nosecret.db'),
      env: { STEWARD_WEBHOOK_SECRET: TEST_SECRET },
    });
    expect(bad.stderr).toContain('Unknown webhook event "lunch"');
    expect(bad.stderr).not.toContain(TEST_SECRET);
  });
});
