/**
 * `/mcp` on two real `steward serve` processes on one PostgreSQL database (the same tokens, so
 * the same signing key), the MCP SDK's client on the 2026-07-28 protocol answering by hand. A
 * `run_short-story` call gets its first form from one server, that server is SIGKILLed, and the
 * same call — the request state and the answers, nothing else — goes on on the other server to
 * done. And a server SIGKILLed while it runs the session on the answers it took: the host sends
 * the same answers to the other server, which takes the session over and gives the next form;
 * the answer counts once.
 */
import { describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { startCli, until, type RunningCli } from '../support/cli-process.js';
import { demoResponder } from '../support/demo-replies.js';
import { startFakeOpenAI } from '../support/fake-openai-server.js';
import { PostgresStore } from '../../src/store/postgres-store.js';
import { readJournal } from '../../src/runtime/journal-waits.js';
import { postgresUnavailable } from '../support/postgres.js';
import { usePostgres } from '../support/use-postgres.js';
import { agreeable, callRound, httpTransport, isInputRequired, mcpClient, type ShownForm } from './mcp-client.js';

const pg = usePostgres();
const TOKEN = 'token-of-ana-0123456789';

/** Two `steward serve` processes on `db` with ana's token (and `env`), pushed to `servers` for the test to kill; their URLs. */
async function twoServers(db: string, servers: RunningCli[], env: Record<string, string> = {}): Promise<string[]> {
  for (let i = 0; i < 2; i++)
    servers.push(startCli(['serve', '--port', '0', '--lease-ms', '1500'], { db, env: { STEWARD_TOKENS: `ana ${TOKEN}`, ...env }, timeoutMs: 120_000 }));
  return Promise.all(servers.map((s) => until(() => /Steward serve on (http:\/\/127\.0\.0\.1:\d+)/.exec(s.stdout)?.[1], 'a server URL', 30_000)));
}

describe.skipIf(postgresUnavailable !== null)('MCP on PostgreSQL', () => {
  it('a call whose server was SIGKILLed goes on on another server with its request state alone', async () => {
    const db = await pg.createDatabase();
    const servers: RunningCli[] = [];
    try {
      const [first, second] = await twoServers(db, servers);

      const host = await mcpClient(httpTransport(first!, TOKEN), 'modern', undefined, true);
      const args = { request: 'A ghost story set in a lighthouse.' };
      let round = await callRound(host, 'run_short-story', args);
      if (!isInputRequired(round)) throw new Error(`expected a form, got ${JSON.stringify(round)}`);
      await host.close().catch(() => {});

      servers[0]!.child.kill('SIGKILL');
      await servers[0]!.result.catch(() => {});

      const other = await mcpClient(httpTransport(second!, TOKEN), 'modern', undefined, true);
      let forms = 0;
      for (let i = 0; i < 40 && isInputRequired(round); i++) {
        const responses = Object.fromEntries(
          Object.entries(round.inputRequests ?? {}).map(([key, request]) => [key, agreeable(request.params as unknown as ShownForm)]),
        );
        forms += Object.keys(responses).length;
        round = await callRound(other, 'run_short-story', args, { requestState: round.requestState!, inputResponses: responses });
      }
      await other.close();
      expect(isInputRequired(round)).toBe(false);
      expect((round as { structuredContent?: unknown }).structuredContent).toMatchObject({ status: 'done' });
      expect(forms).toBeGreaterThan(3);
    } finally {
      for (const s of servers) s.child.kill('SIGKILL');
    }
  });

  it('a server SIGKILLed while it runs the session on the answers it took: the same answers sent to another server go on from there, once', async () => {
    const db = await pg.createDatabase();
    // The demo's replies, held while `holding` (the first server's model call stays in flight until it dies).
    let holding = false;
    const fake = await startFakeOpenAI(demoResponder(() => (holding ? 120_000 : 0)));
    const servers: RunningCli[] = [];
    try {
      const [first, second] = await twoServers(db, servers, { OPENAI_BASE_URL: fake.baseURL, STEWARD_MODEL: 'fake-model', OPENAI_API_KEY: 'test-key' });
      const host = await mcpClient(httpTransport(first!, TOKEN), 'modern', undefined, true);
      const args = { request: 'A ghost story set in a lighthouse.' };
      const asked = await callRound(host, 'run_short-story', args);
      if (!isInputRequired(asked)) throw new Error(`expected a form, got ${JSON.stringify(asked)}`);
      const [key] = Object.keys(asked.inputRequests ?? {});
      const sessionId = key!.split('#')[0]!;
      const answers = { [key!]: agreeable(asked.inputRequests![key!]!.params as unknown as ShownForm) };

      // The answer is taken and journalled; the model call it leads to hangs, and the server dies under it.
      holding = true;
      const calls = fake.requests.length;
      const lost = callRound(host, 'run_short-story', args, { requestState: asked.requestState!, inputResponses: answers }).catch((error: unknown) => error);
      await until(() => fake.requests.length > calls && fake.inFlight > 0, 'the model call of the first server', 30_000);
      servers[0]!.child.kill('SIGKILL');
      await servers[0]!.result.catch(() => {});
      expect(await lost).toBeInstanceOf(Error);
      holding = false;

      // The host sends the same call to the other server: once it took the session over (its lease ran out), the next form.
      const other = await mcpClient(httpTransport(second!, TOKEN), 'modern', undefined, true);
      const retry = () => callRound(other, 'run_short-story', args, { requestState: asked.requestState!, inputResponses: answers });
      const next = await until(
        async () => {
          const round = await retry();
          if (isInputRequired(round)) return round;
          await sleep(200);
          return undefined;
        },
        'the next form from the second server',
        90_000,
      );
      expect(Object.keys(next.inputRequests ?? {})).not.toContain(key);
      await other.close();
      await host.close().catch(() => {});

      const store = new PostgresStore(db);
      try {
        const decisions = (await readJournal(store, sessionId)).filter((e) => e.type === 'user_approved_next_step');
        expect(decisions).toHaveLength(1);
      } finally {
        await store.close();
      }
    } finally {
      for (const s of servers) s.child.kill('SIGKILL');
      await fake.close();
    }
  });
});
