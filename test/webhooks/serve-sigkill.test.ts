/**
 * At least once across a crash: a real `steward serve --webhook A --webhook B` process (SQLite,
 * then PostgreSQL) writes a new session's `session.waiting` message for each receiver with the
 * session's first entry. A acknowledges at once; B holds the request open, and the test
 * SIGKILLs the server while B holds it, so B's message was committed but never acknowledged.
 * A restarted server sends it again, with the same webhook-id, and B acknowledges it. Each
 * receiver then has the message once when repeats are dropped by webhook-id, which is what a
 * receiver does. Nothing here races a timer: the test waits for requests to arrive.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startCli, until, type RunningCli } from '../support/cli-process.js';
import { postgresUnavailable } from '../support/postgres.js';
import { useTempDir } from '../support/temp.js';
import { usePostgres } from '../support/use-postgres.js';
import { client } from '../serve/http.js';
import { startReceiver, TEST_SECRET } from './receiver.js';

const temp = useTempDir('steward-webhook-kill-');
const pg = usePostgres();
let pgUrl = '';
beforeAll(async () => {
  if (!postgresUnavailable) pgUrl = await pg.createDatabase();
}, 60_000);

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function serve(db: string, urls: string[]): RunningCli {
  const args = ['serve', '--port', '0', '--webhook-timeout-ms', '2000', '--webhook-events', 'waiting'];
  for (const url of urls) args.push('--webhook', url);
  const cli = startCli(args, { db, env: { STEWARD_WEBHOOK_SECRET: TEST_SECRET }, timeoutMs: 120_000 });
  cleanups.push(() => cli.child.kill('SIGKILL'));
  return cli;
}

const urlOf = (cli: RunningCli) => until(() => /Steward serve on (http:\/\/127\.0\.0\.1:\d+)/.exec(cli.stdout)?.[1], `the server URL (${cli.stderr})`, 60_000);

async function killedMidDelivery(db: string) {
  const acknowledging = await startReceiver(() => 204);
  let holding = true;
  const slow = await startReceiver(() => (holding ? 'hold' : 204));
  cleanups.push(acknowledging.close, slow.close);

  const first = serve(db, [acknowledging.url, slow.url]);
  const id: string = (await client(await urlOf(first)).post('/sessions', { packageId: 'tiny' })).body.view.id;
  await acknowledging.until(1);
  await slow.until(1);
  // B holds its request: the server dies between the commit and B's acknowledgement.
  first.child.kill('SIGKILL');
  await first.result;
  // Killed before its request timed out: the first server sent B's message once and recorded nothing of it.
  expect(slow.received).toHaveLength(1);
  holding = false;

  const second = serve(db, [acknowledging.url, slow.url]);
  const base = await urlOf(second);
  await until(() => slow.received.length >= 2, 'the message again after the restart', 60_000);
  const health = await until(
    async () => {
      const body = (await client(base).get('/healthz')).body;
      return body.webhooks?.pending === 0 && body;
    },
    'the outbox to empty',
    30_000,
  );
  expect(health.webhooks).toMatchObject({ receivers: 2, pending: 0, dead: 0, deadLetters: [] });

  for (const receiver of [acknowledging, slow]) {
    expect(receiver.received.every((r) => r.verified)).toBe(true);
    const byId = new Map(receiver.received.map((r) => [r.id, r.body]));
    // Once per receiver, repeats dropped by webhook-id.
    expect([...byId.values()].map((body) => [body.type, body.data.sessionId])).toEqual([['session.waiting', id]]);
  }
  // The two receivers' messages are two messages (one row each), not one.
  expect(acknowledging.received[0]!.id).not.toBe(slow.received[0]!.id);
  expect(new Set(slow.received.map((r) => r.id)).size).toBe(1);
  second.child.kill('SIGTERM');
  await second.result;
}

describe('webhooks across a SIGKILL', () => {
  it('SQLite: a message committed but not acknowledged is delivered by the restarted server', { timeout: 180_000 }, async () => {
    await killedMidDelivery(temp.path('kill.db'));
  });

  it.skipIf(postgresUnavailable !== null)('PostgreSQL: the same', { timeout: 180_000 }, async () => {
    await killedMidDelivery(pgUrl);
  });
});
