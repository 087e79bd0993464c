/**
 * `steward mcp`: the real command as a child process, driven by the MCP SDK's own client over
 * stdio (StdioClientTransport), on the offline demo model: a short-story session from one
 * `run_short-story` call to done, on the 2026-07-28 protocol and on the 2025 one, the person
 * answering every form from its schema; a fan-out's steps and artifacts are a form each (research-brief);
 * nothing but the protocol on stdout, and the sessions in the store the command was given.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { cliBin, cliEnv } from '../support/cli-process.js';
import { useTempDir } from '../support/temp.js';
import { agreeable, mcpClient, scriptedPerson, textOf, type Era } from './mcp-client.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { readJournal } from '../../src/runtime/journal-waits.js';

const tmp = useTempDir('steward-mcp-stdio-');
const open: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close();
});

/** `steward mcp` (with `args`) on its own SQLite file, and the host's transport to it; its stderr to `stderr` when given. */
function stewardMcp(db: string, args: string[] = [], stderr?: string[]): StdioClientTransport {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cliBin(), 'mcp', ...args],
    env: cliEnv(db) as Record<string, string>,
    stderr: stderr ? 'pipe' : 'ignore',
  });
  transport.stderr?.on('data', (chunk: Buffer) => stderr?.push(chunk.toString()));
  return transport;
}

describe('steward mcp (stdio)', () => {
  it.each<Era>(['modern', 'legacy'])('runs a short story from one tool call to done (%s protocol)', async (era) => {
    const db = tmp.path(`${era}.db`);
    const stderr: string[] = [];
    const transport = stewardMcp(db, ['--as', 'ana'], stderr);
    const person = scriptedPerson((form) => agreeable(form));
    const client = await mcpClient(transport, era, person);
    open.push(() => client.close());
    expect(client.getProtocolEra()).toBe(era);

    const result = await client.callTool({ name: 'run_short-story', arguments: { request: 'A ghost story set in a lighthouse.' } }, { timeout: 120_000 });
    expect(result.structuredContent, textOf(result)).toMatchObject({ status: 'done' });
    const outcome = result.structuredContent as { sessionId: string; artifacts: { tags: Record<string, string> }[] };
    expect(outcome.artifacts.length).toBeGreaterThan(0);
    // A fan-out asks each of its steps as a form of its own, and every kind of answer the package needs was asked.
    const asked = person.shown.map((f) => Object.keys(f.requestedSchema.properties).sort().join(','));
    expect(asked.some((a) => a.startsWith('approved'))).toBe(true);
    expect(asked.some((a) => a.startsWith('accepted'))).toBe(true);
    await client.close();
    expect(stderr.join('')).toContain('Steward MCP server on stdio');

    const store = new SqliteStore(db);
    try {
      const decisions = (await readJournal(store, outcome.sessionId)).filter((e) => e.kind === 'event' && String(e.type).startsWith('user_'));
      expect(decisions.length).toBe(person.shown.length + 1);
      expect(new Set(decisions.map((e) => `${(e.payload as { by?: string }).by} ${(e.payload as { through?: string }).through}`))).toEqual(
        new Set(['ana mcp']),
      );
    } finally {
      store.close();
    }
  });

  it("asks a fan-out's steps and artifacts as a form each, all in one round, and decides each (research-brief)", async () => {
    const db = tmp.path('fan-out.db');
    const transport = stewardMcp(db);
    const person = scriptedPerson((form) => agreeable(form));
    const client = await mcpClient(transport, 'modern', person);
    open.push(() => client.close());
    const result = await client.callTool({ name: 'run_research-brief', arguments: { request: 'Heat pumps in old houses.' } }, { timeout: 120_000 });
    expect(result.structuredContent, textOf(result)).toMatchObject({ status: 'done' });
    const messages = person.shown.map((f) => f.message);
    expect(messages.filter((m) => / \(step .*, \d of 3 waiting\)/.test(m))).toHaveLength(3);
    expect(messages.filter((m) => /\(\d of 3 under review\)/.test(m))).toHaveLength(3);
  });

  it('a host that cancels the form on the open connection (2025 protocol) leaves the session waiting, and the result says so', async () => {
    const db = tmp.path('cancel.db');
    const transport = stewardMcp(db);
    const person = scriptedPerson(() => ({ action: 'cancel' }));
    const client = await mcpClient(transport, 'legacy', person);
    open.push(() => client.close());
    const result = await client.callTool({ name: 'run_short-story', arguments: { request: 'A ghost story.' } }, { timeout: 120_000 });
    expect(person.shown).toHaveLength(1);
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toMatch(/^Nothing was sent: .* \(cancelled\)\. Session .* still waits \(approve_step, wait \d+\)\. Call continue_session/);
    const { sessionId } = result.structuredContent as { sessionId: string };
    // Coming back: the same wait's form again.
    const again = await client.callTool({ name: 'continue_session', arguments: { sessionId } }, { timeout: 120_000 });
    expect(person.shown).toHaveLength(2);
    expect(person.shown[1]!.message).toBe(person.shown[0]!.message);
    expect(again.structuredContent).toMatchObject({ sessionId, status: 'waiting' });
  });
});
