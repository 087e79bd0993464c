/**
 * `/mcp` on two real `steward serve` processes on one PostgreSQL database (the same tokens, so
 * the same signing key), the demo model, the MCP SDK's client on the 2026-07-28 protocol
 * answering by hand: a `run_short-story` call gets its first form from one server, that server
 * is SIGKILLed, and the same call — the request state and the answers, nothing else — goes on
 * on the other server to done.
 */
import { describe, expect, it } from 'vitest';
import { startCli, until, type RunningCli } from '../support/cli-process.js';
import { postgresUnavailable } from '../support/postgres.js';
import { usePostgres } from '../support/use-postgres.js';
import { agreeable, callRound, httpTransport, isInputRequired, mcpClient, type ShownForm } from './mcp-client.js';

const pg = usePostgres();
const TOKEN = 'token-of-ana-0123456789';

describe.skipIf(postgresUnavailable !== null)('MCP on PostgreSQL', () => {
  it('a call whose server was SIGKILLed goes on on another server with its request state alone', async () => {
    const db = await pg.createDatabase();
    const servers: RunningCli[] = [];
    try {
      for (let i = 0; i < 2; i++)
        servers.push(startCli(['serve', '--port', '0', '--lease-ms', '1500'], { db, env: { STEWARD_TOKENS: `ana ${TOKEN}` }, timeoutMs: 120_000 }));
      const [first, second] = await Promise.all(
        servers.map((s) => until(() => /Steward serve on (http:\/\/127\.0\.0\.1:\d+)/.exec(s.stdout)?.[1], 'a server URL', 30_000)),
      );

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
});
