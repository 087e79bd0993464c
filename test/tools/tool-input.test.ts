/**
 * Elicitation as a durable wait: a server on the 2026-07-28 protocol asks a person for input
 * during a call (input_required, test/tools/servers/notes.mjs `confirm_write`). The session waits
 * in tool_input with the server's form; its requests and opaque state are in the store, so the
 * answer may come after the process that asked is gone (SQLite) or to another server of the
 * same database (PostgreSQL). The answer is checked against the server's schema; accepted or
 * declined, it goes back with the request state and the call completes.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime, SqliteStore, type Runtime } from '../../src/index.js';
import { PostgresStore } from '../../src/store/postgres-store.js';
import { scriptedCall, ScriptedModel, type ScriptStep } from '../../src/testing.js';
import type { ModelRequest } from '../../src/machine.js';
import { postgresUnavailable } from '../support/postgres.js';
import { testScript } from '../support/script-build.js';
import { usePostgres } from '../support/use-postgres.js';
import { notesPackage, runKeeper, submitReply, toolResultsIn, type NotesPackage } from './notes-package.js';
import { CONFIRM_FORM } from './tool-wait-sessions.js';

const runtimes: Runtime[] = [];
const stores: PostgresStore[] = [];
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((r) => r.close()));
  await Promise.all(stores.splice(0).map((s) => s.close()));
});

/** The tool result the worker's next round was given for `callId`. */
const resultOf = (request: ModelRequest, callId: string) => toolResultsIn(request)[callId] ?? '';

/** The worker's round after the call: it records what it read, then submits. */
const submitAfter =
  (callId: string, told: { text: string }): ScriptStep =>
  (request) => {
    told.text = resultOf(request, callId);
    return submitReply('Done.');
  };

function runtimeOf(notes: NotesPackage, steps: ScriptStep[], store?: SqliteStore | PostgresStore) {
  const runtime = createRuntime({
    model: new ScriptedModel(steps),
    packagesDir: notes.packagesDir,
    toolApproval: () => 'never',
    toolHost: { env: notes.env, log: () => {} },
    ...(store ? { store } : {}),
  });
  runtimes.push(runtime);
  return runtime;
}

describe('elicitation as a durable wait', { timeout: 120_000 }, () => {
  it('the server asks during the call: the session waits with its form; a decline goes back to the server, which did not write', async () => {
    const notes = notesPackage();
    const told = { text: '' };
    const runtime = runtimeOf(notes, [
      { agent: 'manager', toolCalls: [runKeeper()] },
      { agent: 'worker', toolCalls: [scriptedCall('notes__confirm_write', { path: 'a.md', text: 'Hello.' }, 'w1')] },
      submitAfter('w1', told),
    ]);
    const session = await runtime.createSession({ packageId: 'notes' });
    const asked = await session.send({ type: 'user_submitted_input', text: 'Write a.md.' });
    expect(asked.ok && asked.view.state).toBe('waiting_user.tool_input');
    const view = session.view();
    expect(view.enabledEvents).toEqual(['user_answered_tool_input']);
    expect(view.toolCalls).toMatchObject([
      {
        callId: 'w1',
        server: 'notes',
        tool: 'confirm_write',
        status: 'asking',
        input: { requests: [{ key: 'confirm', mode: 'form', message: 'Write a.md?', requestedSchema: CONFIRM_FORM }], requestState: 'confirm:a.md' },
      },
    ]);
    // Every request is answered, by its key.
    const missing = await session.send({ type: 'user_answered_tool_input', callId: 'w1', responses: { other: { action: 'decline' } } });
    expect(missing.ok || missing.error.message).toBe(
      'Answer each request of the call by its key (confirm); unanswered: confirm; not asked: other. Nothing was changed.',
    );
    const declined = await session.send({ type: 'user_answered_tool_input', callId: 'w1', responses: { confirm: { action: 'decline' } }, by: 'ana' });
    expect(declined.ok && declined.view.state).toBe('waiting_user.review_artifact');
    expect(told.text).toBe('Error: not written (decline)');
    expect(notes.calls()).toEqual([
      { tool: 'confirm_write?', args: { path: 'a.md', text: 'Hello.' } },
      { tool: 'confirm_write', args: { path: 'a.md', text: 'Hello.', answer: { action: 'decline' } } },
    ]);
  });

  it('SQLite: the process that asked is killed; after a restart the answer is checked against the server’s schema and completes the call', async () => {
    const notes = notesPackage();
    const db = join(mkdtempSync(join(tmpdir(), 'steward-asking-')), 'steward.db');
    const child = spawn(process.execPath, [testScript('test/tools/fixtures/ask-then-wait.ts'), db, notes.packagesDir, notes.env.NOTES_LOG!], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          if (out.includes('\n')) resolve();
        });
        child.once('exit', (code) => reject(new Error(`the asking process exited (${code}) before the wait: ${stderr}`)));
      });
    } finally {
      child.kill('SIGKILL');
    }
    await new Promise((resolve) => child.once('exit', resolve));
    expect(out.trim()).toBe('waiting_user.tool_input');

    const told = { text: '' };
    const runtime = runtimeOf(notes, [submitAfter('w1', told)], new SqliteStore(db));
    const resumed = await runtime.resumeSession('asking');
    const waiting = await resumed.settled();
    expect(waiting.state).toBe('waiting_user.tool_input');
    expect(waiting.toolCalls?.[0]?.input?.requestState).toBe('confirm:a.md');
    // An answer that breaks the form is refused with the schema's words; nothing reaches the server.
    const bad = await resumed.send({
      type: 'user_answered_tool_input',
      callId: 'w1',
      responses: { confirm: { action: 'accept', content: { confirm: true, initials: 'x' } } },
    });
    expect(bad.ok || bad.error.message).toBe(
      'Invalid event: The answer to "confirm" does not match the form notes.confirm_write asked for: content/initials must NOT have fewer than 2 characters. Nothing was sent; fix the answer and send it again.',
    );
    expect(notes.calls()).toEqual([{ tool: 'confirm_write?', args: { path: 'a.md', text: 'Hello.' } }]);
    const good = await resumed.send({
      type: 'user_answered_tool_input',
      callId: 'w1',
      responses: { confirm: { action: 'accept', content: { confirm: true, initials: 'AB' } } },
      wait: waiting.wait!,
    });
    expect(good.ok && good.view.state).toBe('waiting_user.review_artifact');
    expect(told.text).toBe('wrote a.md, confirmed by AB');
    // A new server process took the answer: the request state carried what the first one asked.
    expect(notes.calls()).toEqual([
      { tool: 'confirm_write?', args: { path: 'a.md', text: 'Hello.' } },
      { tool: 'confirm_write', args: { path: 'a.md', text: 'Hello.', answer: { action: 'accept', content: { confirm: true, initials: 'AB' } } } },
    ]);
  });
});

const pg = usePostgres();

describe.skipIf(postgresUnavailable !== null)('elicitation across servers on PostgreSQL', () => {
  it('one server asks, another server of the same database takes the answer and completes the call', { timeout: 120_000 }, async () => {
    const notes = notesPackage();
    const url = await pg.createDatabase();
    const storeA = new PostgresStore(url);
    const storeB = new PostgresStore(url);
    stores.push(storeA, storeB);
    const a = runtimeOf(
      notes,
      [
        { agent: 'manager', toolCalls: [runKeeper()] },
        { agent: 'worker', toolCalls: [scriptedCall('notes__confirm_write', { path: 'b.md', text: 'Hi.' }, 'w2')] },
      ],
      storeA,
    );
    const session = await a.createSession({ packageId: 'notes', id: 'asking-pg' });
    const asked = await session.send({ type: 'user_submitted_input', text: 'Write b.md.' });
    expect(asked.ok && asked.view.state).toBe('waiting_user.tool_input');

    const told = { text: '' };
    const b = runtimeOf(notes, [submitAfter('w2', told)], storeB);
    const there = await b.resumeSession('asking-pg');
    const waiting = await there.settled();
    expect(waiting.state).toBe('waiting_user.tool_input');
    const answered = await there.send({
      type: 'user_answered_tool_input',
      callId: 'w2',
      responses: { confirm: { action: 'accept', content: { confirm: true, initials: 'CD' } } },
      wait: waiting.wait!,
    });
    expect(answered.ok && answered.view.state).toBe('waiting_user.review_artifact');
    expect(told.text).toBe('wrote b.md, confirmed by CD');
    expect(notes.calls().map((c) => c.tool)).toEqual(['confirm_write?', 'confirm_write']);
    // The journal holds the question and the answer, in order.
    const journal = await storeB.journal('asking-pg');
    const types = journal.filter((e) => e.kind === 'event').map((e) => e.type);
    expect(types).toContain('user_answered_tool_input');
  });
});

describe('a page to visit, and what Steward does not answer', { timeout: 120_000 }, () => {
  it('URL mode: the session shows the page; the person confirms when done and the read goes on', async () => {
    const notes = notesPackage();
    const told = { text: '' };
    const runtime = runtimeOf(notes, [
      { agent: 'manager', toolCalls: [runKeeper()] },
      { agent: 'worker', toolCalls: [scriptedCall('notes__read_private', { path: 'p.md' }, 'r1')] },
      submitAfter('r1', told),
    ]);
    const session = await runtime.createSession({ packageId: 'notes' });
    const asked = await session.send({ type: 'user_submitted_input', text: 'Read p.md.' });
    expect(asked.ok && asked.view.state).toBe('waiting_user.tool_input');
    expect(session.view().toolCalls?.[0]?.input?.requests).toEqual([
      { key: 'login', mode: 'url', message: 'Sign in to read private notes.', url: 'https://notes.example/login?next=p.md' },
    ]);
    const refused = await session.send({ type: 'user_answered_tool_input', callId: 'r1', responses: { login: { action: 'accept', content: { ok: true } } } });
    expect(refused.ok || refused.error.message).toMatch(/"login" asks the person to visit a page/);
    const done = await session.send({ type: 'user_answered_tool_input', callId: 'r1', responses: { login: { action: 'accept' } } });
    expect(done.ok && done.view.state).toBe('waiting_user.review_artifact');
    expect(told.text).toBe('private: (no note)');
    expect(notes.calls().at(-1)).toEqual({ tool: 'read_private', args: { path: 'p.md', answer: { action: 'accept' } } });
  });

  it('a server may not ask for the client’s model (sampling: Steward does not declare it): the call fails and the model reads why', async () => {
    const notes = notesPackage();
    const told = { text: '' };
    const runtime = runtimeOf(notes, [
      { agent: 'manager', toolCalls: [runKeeper()] },
      { agent: 'worker', toolCalls: [scriptedCall('notes__summarize', { path: 'p.md' }, 'm1')] },
      submitAfter('m1', told),
    ]);
    const session = await runtime.createSession({ packageId: 'notes' });
    const sent = await session.send({ type: 'user_submitted_input', text: 'Summarize p.md.' });
    expect(sent.ok && sent.view.state).toBe('waiting_user.review_artifact');
    // The server's SDK refuses to ask what the client did not declare; Steward's own check (inputRequestsOf) stands behind it.
    expect(told.text).toMatch(/^Error: the call failed: notes\.summarize failed: .*Cannot request input 'summary' \(sampling\/createMessage\)/);
  });
});
