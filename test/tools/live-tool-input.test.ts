/**
 * A worker's call of a server of a revision before 2026-07-28, which asks a person on the live
 * connection inside the call (test/mcp/servers/legacy.mjs, built with the official MCP SDK): the
 * session waits in tool_input with the question marked `live`, and the answer goes to the call
 * under way — never a second call. Only the runtime holding that connection can answer: a
 * session restored in another ends in tool_interrupted.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime, SqliteStore, type Runtime } from '../../src/index.js';
import { scriptedCall, ScriptedModel } from '../../src/testing.js';
import { legacyPackage } from './legacy-package.js';
import { submitReply, toolResultsIn as toolResults } from './notes-package.js';

const runtimes: Runtime[] = [];
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((r) => r.close()));
});

const runAsker = () => scriptedCall('run_worker', { workerId: 'asker', reason: 'Ask.', requiresApproval: false });
const askCall = { agent: 'worker' as const, toolCalls: [scriptedCall('legacy__ask', {}, 'q1')] };

const accept = { input: { action: 'accept' as const, content: { ok: true } } };

describe('a question a server asks on the live connection', { timeout: 120_000 }, () => {
  it('waits in tool_input marked live; the answer completes the call under way, whose result the model reads', async () => {
    const asks = legacyPackage();
    let seen: Record<string, string> = {};
    const model = new ScriptedModel([
      { agent: 'manager', toolCalls: [runAsker()] },
      askCall,
      (request) => {
        seen = toolResults(request);
        return submitReply('Told.');
      },
    ]);
    const runtime = createRuntime({ model, packagesDir: asks.packagesDir, toolHost: { log: () => {} } });
    runtimes.push(runtime);
    const session = await runtime.createSession({ packageId: 'asks' });
    const waiting = await session.send({ type: 'user_submitted_input', text: 'Ask me.' });
    expect(waiting.ok && waiting.view.state).toBe('waiting_user.tool_input');
    expect(session.view().toolCalls).toMatchObject([
      {
        callId: 'q1',
        server: 'legacy',
        tool: 'ask',
        status: 'asking',
        input: { live: true, requests: [{ key: 'input', mode: 'form', message: 'Really?', requestedSchema: { required: ['ok'] } }] },
      },
    ]);
    expect(session.view().toolCalls?.[0]?.input).not.toHaveProperty('requestState');

    // An answer that does not fit the server's form is refused before anything is sent.
    const bad = await session.send({ type: 'user_answered_tool_input', callId: 'q1', responses: { input: { action: 'accept', content: { ok: 'yes' } } } });
    expect(bad).toMatchObject({ ok: false, error: { code: 'invalid_event' } });
    expect(asks.reached()).toEqual([{ tool: 'ask' }]);

    const done = await session.send({ type: 'user_answered_tool_input', callId: 'q1', responses: accept, by: 'ana' });
    expect(done.ok && done.view.state).toBe('waiting_user.review_artifact');
    expect(seen).toEqual({ q1: 'the answer was accept {"ok":true}' });
    // One call, answered once: the answer went to the call under way.
    expect(asks.reached()).toEqual([{ tool: 'ask' }, { answered: 'accept' }]);
    model.assertComplete();
  });

  it('restored in another runtime, the answer cannot reach the question: the call is interrupted, not made again', async () => {
    const asks = legacyPackage();
    const db = join(mkdtempSync(join(tmpdir(), 'steward-live-')), 'steward.db');
    const first = createRuntime({
      model: new ScriptedModel([{ agent: 'manager', toolCalls: [runAsker()] }, askCall]),
      packagesDir: asks.packagesDir,
      store: new SqliteStore(db),
      toolHost: { log: () => {} },
    });
    runtimes.push(first);
    const session = await first.createSession({ packageId: 'asks' });
    const waiting = await session.send({ type: 'user_submitted_input', text: 'Ask me.' });
    expect(waiting.ok && waiting.view.state).toBe('waiting_user.tool_input');
    // Another process takes the session over; the first still runs, and still holds the question on its connection.
    await session.close();

    const model = new ScriptedModel([]);
    const second = createRuntime({ model, packagesDir: asks.packagesDir, store: new SqliteStore(db), toolHost: { log: () => {} } });
    runtimes.push(second);
    const resumed = await second.resumeSession(session.id);
    expect(resumed.view().toolCalls).toMatchObject([{ callId: 'q1', status: 'asking', input: { live: true } }]);
    const answered = await resumed.send({ type: 'user_answered_tool_input', callId: 'q1', responses: accept });
    expect(answered.ok && answered.view.state).toBe('waiting_user.tool_interrupted');
    expect(answered.ok && answered.view.toolCalls).toMatchObject([{ callId: 'q1', status: 'interrupted' }]);
    expect(answered.ok && answered.view.enabledEvents).toEqual(['user_approved_tool_call', 'user_rejected_tool_call', 'user_gave_tool_result']);
    // The server saw the one call, from the first process, and no answer; nothing called it again.
    expect(asks.reached()).toEqual([{ tool: 'ask' }]);
    await resumed.close();
  });
});
