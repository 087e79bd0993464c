/**
 * A server of a revision before 2026-07-28 asks a person on the live connection, inside its
 * call (servers/legacy.mjs, built with the official server SDK): the host holds the question
 * under the caller's key, and the caller's next call answers it — the call is never made twice.
 */
import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createToolHost, type ToolHost } from '../../src/mcp/tool-host.js';
import type { CallToolRequest, InputResponses } from '../../src/mcp/types.js';
import { legacyServer, resultText, serverChildren } from './servers.js';

const env = { PATH: process.env.PATH };
const hosts: ToolHost[] = [];
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((host) => host.close()));
});

/** A host and a legacy server that writes what reached it to a log of its own. */
function setUp(config: { timeoutMs?: number } = {}) {
  const lines: string[] = [];
  const host = createToolHost({ env, log: (line) => lines.push(line) });
  hosts.push(host);
  const log = join(mkdtempSync(join(tmpdir(), 'steward-legacy-')), 'calls.jsonl');
  const server = legacyServer('old', { env: { LEGACY_LOG: log }, ...config });
  const reached = () =>
    existsSync(log)
      ? readFileSync(log, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as Record<string, string>)
      : [];
  const ask = (heldKey: string, extra: Partial<CallToolRequest> = {}) => host.callTool({ server, tool: 'ask', arguments: {}, heldKey, ...extra });
  const answer = (heldKey: string, inputResponses: InputResponses, extra: Partial<CallToolRequest> = {}) =>
    ask(heldKey, { answersHeld: true, inputResponses, ...extra });
  return { host, server, lines, reached, ask, answer };
}

describe('a question asked on the live connection', { timeout: 60_000 }, () => {
  it('comes back as input_required marked live; the answer completes the call under way, which the server saw once', async () => {
    const { ask, answer, reached } = setUp();
    const asked = await ask('s1/c1');
    expect(asked).toMatchObject({
      kind: 'input_required',
      live: true,
      requests: {
        input: {
          method: 'elicitation/create',
          params: { message: 'Really?', requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] } },
        },
      },
    });
    expect(asked).not.toHaveProperty('requestState');
    const done = await answer('s1/c1', { input: { action: 'accept', content: { ok: true } } });
    expect(resultText(done)).toBe('the answer was accept {"ok":true}');
    expect(reached()).toEqual([{ tool: 'ask' }, { answered: 'accept' }]);
  });

  it.each(['decline', 'cancel'] as const)('passes a %s on to the server', async (action) => {
    const { ask, answer, reached } = setUp();
    expect(await ask('k')).toMatchObject({ kind: 'input_required', live: true });
    expect(resultText(await answer('k', { input: { action } }))).toBe(`the answer was ${action}`);
    expect(reached()).toEqual([{ tool: 'ask' }, { answered: action }]);
  });

  it('holds each question of one call in turn under the same key', async () => {
    const { host, server, answer, reached } = setUp();
    const first = await host.callTool({ server, tool: 'ask_twice', arguments: {}, heldKey: 'twice' });
    expect(first).toMatchObject({ kind: 'input_required', live: true, requests: { input: { params: { message: 'First?' } } } });
    const second = await answer('twice', { input: { action: 'accept', content: { ok: true } } });
    expect(second).toMatchObject({ kind: 'input_required', live: true, requests: { input: { params: { message: 'Second?' } } } });
    expect(resultText(await answer('twice', { input: { action: 'decline' } }))).toBe('accept then decline');
    expect(reached()).toEqual([{ tool: 'ask_twice' }]);
  });

  it('answers for a key with nothing held are live_input_lost, and nothing is called', async () => {
    const { ask, answer, reached } = setUp();
    const lost = await answer('never-asked', { input: { action: 'accept', content: { ok: true } } });
    expect(lost).toMatchObject({ kind: 'failed', error: { reason: 'live_input_lost', message: expect.stringContaining('it was not made again') } });
    // Once answered, a question is no longer held: answering it again reaches nothing either.
    await ask('once');
    await answer('once', { input: { action: 'decline' } });
    expect(await answer('once', { input: { action: 'accept', content: { ok: true } } })).toMatchObject({
      kind: 'failed',
      error: { reason: 'live_input_lost' },
    });
    expect(reached()).toEqual([{ tool: 'ask' }, { answered: 'decline' }]);
  });

  it('does not count a person’s time against the call’s time limit', async () => {
    const { ask, answer } = setUp({ timeoutMs: 2_000 });
    expect(await ask('slow')).toMatchObject({ kind: 'input_required', live: true });
    // Not a synchronisation: the limit must not run while the question is held, however long that is.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(resultText(await answer('slow', { input: { action: 'accept', content: { ok: false } } }))).toBe('the answer was accept {"ok":false}');
  });

  it('a caller that stops cancels the held question and the call', async () => {
    const { ask, answer, reached } = setUp();
    await ask('stopping');
    const stopped = new AbortController();
    stopped.abort();
    const outcome = await answer('stopping', { input: { action: 'accept', content: { ok: true } } }, { signal: stopped.signal });
    expect(outcome).toMatchObject({ kind: 'failed', error: { reason: 'cancelled' } });
    await vi.waitFor(() => expect(reached()).toEqual([{ tool: 'ask' }, { answered: 'cancel' }]), { timeout: 10_000 });
  });

  it('is declined, and that is logged, when the caller gave no key to hold it under', async () => {
    const { host, server, lines } = setUp();
    expect(resultText(await host.callTool({ server, tool: 'ask', arguments: {} }))).toBe('the answer was decline');
    expect(lines).toContain(
      'MCP server "old": asked for input on the live connection (a pre-2026-07-28 server): declined: its caller cannot be asked later (no heldKey). Its message: Really?',
    );
  });

  it('is declined when two calls are under way on the connection: nothing on the wire says whose it is', async () => {
    const { host, server, lines, ask } = setUp();
    await host.listTools(server);
    // Both are under way before any answer from the server can arrive (one turn of the event loop).
    const waiting = host.callTool({ server, tool: 'wait', arguments: {}, heldKey: 'w' });
    const asking = ask('a');
    expect(resultText(await asking)).toBe('the answer was decline');
    expect(lines).toContain(
      'MCP server "old": asked for input on the live connection (a pre-2026-07-28 server): declined: 2 calls were under way, and nothing on the wire says which one asks. Its message: Really?',
    );
    expect(resultText(await host.callTool({ server, tool: 'release', arguments: {} }))).toBe('done');
    expect(resultText(await waiting)).toBe('released');
  });

  it('close() cancels a held question and leaves no process; its answer then reaches nothing', async () => {
    const { host, ask, answer } = setUp();
    expect(await ask('held')).toMatchObject({ kind: 'input_required', live: true });
    expect(serverChildren()).not.toEqual([]);
    await host.close();
    expect(serverChildren()).toEqual([]);
    expect(await answer('held', { input: { action: 'accept', content: { ok: true } } })).toMatchObject({
      kind: 'failed',
      error: { reason: 'live_input_lost' },
    });
  });

  it('holds at most limits.heldQuestions: past it the oldest question is cancelled and its answer finds none held', async () => {
    const lines: string[] = [];
    const host = createToolHost({ env, log: (line) => lines.push(line), limits: { heldQuestions: 1 } });
    hosts.push(host);
    const [first, second] = [legacyServer('one'), legacyServer('two')];
    expect(await host.callTool({ server: first, tool: 'ask', arguments: {}, heldKey: 'a' })).toMatchObject({ kind: 'input_required', live: true });
    expect(await host.callTool({ server: second, tool: 'ask', arguments: {}, heldKey: 'b' })).toMatchObject({ kind: 'input_required', live: true });
    expect(lines.some((line) => /more than 1 questions wait for people \(limits\.heldQuestions\): the oldest, of one\.ask, was cancelled/.test(line))).toBe(
      true,
    );
    const late = await host.callTool({
      server: first,
      tool: 'ask',
      arguments: {},
      heldKey: 'a',
      answersHeld: true,
      inputResponses: { input: { action: 'accept' } },
    });
    expect(late).toMatchObject({ kind: 'failed', error: { reason: 'live_input_lost' } });
    const kept = await host.callTool({
      server: second,
      tool: 'ask',
      arguments: {},
      heldKey: 'b',
      answersHeld: true,
      inputResponses: { input: { action: 'decline' } },
    });
    expect(resultText(kept)).toBe('the answer was decline');
  });
});
