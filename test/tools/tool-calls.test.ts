/**
 * A worker's MCP tool calls through the runtime, against a server built with the official MCP
 * SDK that records every call it receives (test/tools/servers/notes.mjs): annotations decide
 * which calls wait; several calls of one reply are decided one by one over several sends; a
 * rejected or undecided call never reaches the server; an edit is checked against the tool's
 * schema and runs as edited; a tool changed since its approval is not called.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createRuntime, SqliteStore, type Runtime } from '../../src/index.js';
import { scriptedCall, ScriptedModel, type ScriptStep } from '../../src/testing.js';
import { testScript } from '../support/script-build.js';
import { notesPackage, runKeeper, submitReply, toolResultsIn as toolResults, type NotesPackage } from './notes-package.js';

const runtimes: Runtime[] = [];
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((r) => r.close()));
});

function runtimeFor(notes: NotesPackage, steps: ScriptStep[], extra: Partial<Parameters<typeof createRuntime>[0]> = {}) {
  const model = new ScriptedModel(steps);
  const runtime = createRuntime({ model, packagesDir: notes.packagesDir, toolHost: { env: notes.env, log: () => {} }, ...extra });
  runtimes.push(runtime);
  return { model, runtime };
}

describe('MCP tool calls of a worker', { timeout: 120_000 }, () => {
  it('runs a read at once, waits for a person on writes and deletes, decides three calls over three sends, and runs only what was approved, as approved, in the model’s order', async () => {
    const notes = notesPackage();
    let seen: Record<string, string> = {};
    const { model, runtime } = runtimeFor(notes, [
      { agent: 'manager', toolCalls: [runKeeper()] },
      {
        agent: 'worker',
        toolCalls: [
          scriptedCall('notes__write_note', { path: 'a.md', text: 'One' }, 'c1'),
          scriptedCall('notes__read_note', { path: 'a.md' }, 'c2'),
          scriptedCall('notes__delete_note', { path: 'b.md' }, 'c3'),
          scriptedCall('notes__write_note', { path: 'c.md', text: 'Three' }, 'c4'),
        ],
      },
      (request) => {
        seen = toolResults(request);
        return submitReply('Kept.');
      },
    ]);
    const session = await runtime.createSession({ packageId: 'notes' });
    const first = await session.send({ type: 'user_submitted_input', text: 'Keep my notes.' });
    expect(first.ok && first.view.state).toBe('waiting_user.approve_tool');
    const view = session.view();
    const wait = view.wait;
    expect(view.toolCalls?.map((c) => [c.callId, c.status, c.approvalBy])).toEqual([
      ['c1', 'pending', 'default'],
      ['c2', 'approved', 'read_only'],
      ['c3', 'pending', 'default'],
      ['c4', 'pending', 'default'],
    ]);
    expect(view.toolCalls?.[0]).toMatchObject({ server: 'notes', tool: 'write_note', description: 'Writes a note.', annotations: { destructiveHint: true } });
    // Nothing reached the server while calls wait, not even the read (the calls run in order, once all are decided).
    expect(notes.calls()).toEqual([]);

    // Edited, then rejected: the wait stays open (the same wait), one decision at a time.
    const edited = await session.send({ type: 'user_approved_tool_call', callId: 'c4', arguments: { path: 'c.md', text: 'Edited' }, by: 'ana' });
    expect(edited.ok && [edited.view.state, edited.view.wait]).toEqual(['waiting_user.approve_tool', wait]);
    const rejected = await session.send({ type: 'user_rejected_tool_call', callId: 'c3', reason: 'Keep b.' });
    expect(rejected.ok && rejected.view.toolCalls?.map((c) => c.status)).toEqual(['pending', 'approved', 'rejected', 'approved']);

    // Refused loudly: a call already decided, a call that is not there, and a bad edit (the tool's schema, by the MCP SDK's validator).
    const again = await session.send({ type: 'user_approved_tool_call', callId: 'c3' });
    expect(again).toMatchObject({ ok: false, error: { code: 'event_refused', message: expect.stringContaining('Call "c3" was already decided (rejected)') } });
    const unknown = await session.send({ type: 'user_rejected_tool_call', callId: 'c9' });
    expect(unknown).toMatchObject({
      ok: false,
      error: { message: expect.stringContaining('No call "c9" waits for a decision; calls waiting: "c1" (notes.write_note)') },
    });
    const badEdit = await session.send({ type: 'user_approved_tool_call', callId: 'c1', arguments: { path: 'a.md' } });
    expect(badEdit).toMatchObject({
      ok: false,
      error: { code: 'invalid_event', message: expect.stringMatching(/notes\.write_note do not match its input schema: .*text/) },
    });
    expect(session.view().toolCalls?.[0]?.status).toBe('pending');
    expect(notes.calls()).toEqual([]);

    // The last decision: the approved calls run, in the model's order; the rejected one never does.
    const done = await session.send({ type: 'user_approved_tool_call', callId: 'c1' });
    expect(done.ok && done.view.state).toBe('waiting_user.review_artifact');
    expect(notes.calls()).toEqual([
      { tool: 'write_note', args: { path: 'a.md', text: 'One' } },
      { tool: 'read_note', args: { path: 'a.md' } },
      { tool: 'write_note', args: { path: 'c.md', text: 'Edited' } },
    ]);
    // The model got one result per call: what each did, and the rejection with its reason.
    expect(seen).toEqual({
      c1: 'wrote a.md',
      c2: 'One',
      c3: 'Error: a person rejected this call; it did not run. Their reason: Keep b.',
      c4: 'wrote c.md',
    });
    model.assertComplete();
  });

  it('does not call a tool whose definition changed since it was approved: the call waits again, showing what it was and is (SQLite, across a restart)', async () => {
    const notes = notesPackage();
    const db = join(mkdtempSync(join(tmpdir(), 'steward-tools-')), 'steward.db');
    const writeCall = { agent: 'worker' as const, toolCalls: [scriptedCall('notes__write_note', { path: 'a.md', text: 'One' }, 'w1')] };
    const first = runtimeFor(notes, [{ agent: 'manager', toolCalls: [runKeeper()] }, writeCall], { store: new SqliteStore(db) });
    const session = await first.runtime.createSession({ packageId: 'notes' });
    const waiting = await session.send({ type: 'user_submitted_input', text: 'Write a.' });
    expect(waiting.ok && waiting.view.state).toBe('waiting_user.approve_tool');
    const pinnedDigest = waiting.ok ? waiting.view.toolCalls?.[0]?.digest : undefined;
    await session.close();
    await first.runtime.close();

    // The server is redeployed with a new description of write_note; Steward restarts and the person approves.
    const changedEnv = { ...notes.env, NOTES_WRITE_DESCRIPTION: 'Writes a note, and mails it to everyone.' };
    const model = new ScriptedModel([
      (request) => ({
        content: null,
        toolCalls: [
          { id: 's1', type: 'function', function: { name: 'submit', arguments: JSON.stringify({ outputs: { note: toolResults(request).w1 ?? '' } }) } },
        ],
      }),
    ]);
    const second = createRuntime({ model, packagesDir: notes.packagesDir, store: new SqliteStore(db), toolHost: { env: changedEnv, log: () => {} } });
    runtimes.push(second);
    const resumed = await second.resumeSession(session.id);
    const approved = await resumed.send({ type: 'user_approved_tool_call', callId: 'w1' });
    expect(approved.ok && approved.view.state).toBe('waiting_user.approve_tool');
    const item = approved.ok ? approved.view.toolCalls?.[0] : undefined;
    expect(item).toMatchObject({
      status: 'pending',
      changed: { before: { description: 'Writes a note.', digest: pinnedDigest }, after: { description: 'Writes a note, and mails it to everyone.' } },
    });
    expect(approved.ok && approved.view.wait).toBeGreaterThan(waiting.ok ? waiting.view.wait! : 0);
    expect(notes.calls()).toEqual([]);

    // Approved again, knowing the change: it runs.
    const ran = await resumed.send({ type: 'user_approved_tool_call', callId: 'w1' });
    expect(ran.ok && ran.view.state).toBe('waiting_user.review_artifact');
    expect(notes.calls()).toEqual([{ tool: 'write_note', args: { path: 'a.md', text: 'One' } }]);
    await resumed.close();
  });

  it('checks an edit against the tool’s schema in a process that has not run a worker turn (resumed from SQLite), and runs it as edited', async () => {
    const notes = notesPackage();
    const db = join(mkdtempSync(join(tmpdir(), 'steward-edit-')), 'steward.db');
    const first = runtimeFor(
      notes,
      [
        { agent: 'manager', toolCalls: [runKeeper()] },
        { agent: 'worker', toolCalls: [scriptedCall('notes__write_note', { path: 'a.md', text: 'One' }, 'e1')] },
      ],
      { store: new SqliteStore(db) },
    );
    const session = await first.runtime.createSession({ packageId: 'notes' });
    await session.send({ type: 'user_submitted_input', text: 'Write a.' });
    await session.close();
    await first.runtime.close();

    const second = runtimeFor(notes, [{ agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { note: 'n' } }, 's1')] }], {
      store: new SqliteStore(db),
    });
    const resumed = await second.runtime.resumeSession(session.id);
    const bad = await resumed.send({ type: 'user_approved_tool_call', callId: 'e1', arguments: { path: 'a.md', text: '' } });
    expect(bad).toMatchObject({
      ok: false,
      error: { code: 'invalid_event', message: expect.stringMatching(/write_note do not match its input schema: .*text/) },
    });
    const good = await resumed.send({ type: 'user_approved_tool_call', callId: 'e1', arguments: { path: 'b.md', text: 'Edited' } });
    expect(good.ok && good.view.state).toBe('waiting_user.review_artifact');
    expect(notes.calls()).toEqual([{ tool: 'write_note', args: { path: 'b.md', text: 'Edited' } }]);
    await resumed.close();
  });

  it.each([
    ['the manifest says a tool never asks', { tools: { write_note: { approval: 'never' } } }, undefined, ['approved', 'manifest']],
    ['the manifest says a server always asks, read-only tools too', { approval: 'always' }, undefined, ['pending', 'manifest']],
    ['an untrusted server: its readOnlyHint is not believed', { trusted: false }, undefined, ['pending', 'untrusted_server']],
    ['the deployment overrules the manifest', { approval: 'never' }, () => 'always' as const, ['pending', 'deployment']],
  ])('decides who approves: %s', async (_name, manifest, toolApproval, expected) => {
    const notes = notesPackage(manifest);
    const read = Object.hasOwn(manifest, 'tools')
      ? scriptedCall('notes__write_note', { path: 'a.md', text: 'x' }, 'p1')
      : scriptedCall('notes__read_note', { path: 'a.md' }, 'p1');
    const { runtime } = runtimeFor(
      notes,
      [
        { agent: 'manager', toolCalls: [runKeeper()] },
        { agent: 'worker', toolCalls: [read, scriptedCall('submit', { outputs: { note: 'n' } }, 'p2')] },
      ],
      toolApproval ? { toolApproval } : {},
    );
    const session = await runtime.createSession({ packageId: 'notes' });
    const result = await session.send({ type: 'user_submitted_input', text: 'Go.' });
    expect(result.ok).toBe(true);
    const item = session.view().toolCalls?.[0] ?? runtime.live.get(session.id)?.view().toolCalls?.[0];
    const state = session.view().state;
    if (expected[0] === 'approved') {
      // Ran at once; the submit of the same reply then published the artifact.
      expect(state).toBe('waiting_user.review_artifact');
      expect(notes.calls()).toHaveLength(1);
    } else {
      expect(state).toBe('waiting_user.approve_tool');
      expect([item?.status, item?.approvalBy]).toEqual(expected);
      expect(notes.calls()).toEqual([]);
    }
  });
});

describe('a process that dies during a tool call', { timeout: 120_000 }, () => {
  it('SIGKILL mid-call: on resume the session waits in tool_interrupted, the destructive call is not repeated, and the person gives its result', async () => {
    const notes = notesPackage();
    const db = join(mkdtempSync(join(tmpdir(), 'steward-killed-')), 'steward.db');
    const child = spawn(process.execPath, [testScript('test/tools/fixtures/call-then-hang.ts'), db, notes.packagesDir, notes.env.NOTES_LOG!], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    try {
      await vi.waitFor(() => expect(notes.calls(), stderr).toEqual([{ tool: 'slow_write', args: { path: 'a.md' } }]), { timeout: 60_000, interval: 100 });
    } finally {
      child.kill('SIGKILL');
    }
    await new Promise((resolve) => child.once('exit', resolve));

    let told = '';
    const model = new ScriptedModel([
      (request) => {
        told = toolResults(request).k1 ?? '';
        return submitReply('Checked.');
      },
    ]);
    const runtime = createRuntime({ model, packagesDir: notes.packagesDir, store: new SqliteStore(db), toolHost: { env: notes.env, log: () => {} } });
    runtimes.push(runtime);
    const resumed = await runtime.resumeSession('killed');
    const waiting = await resumed.settled();
    expect(waiting.state).toBe('waiting_user.tool_interrupted');
    expect(waiting.toolCalls).toMatchObject([{ callId: 'k1', server: 'notes', tool: 'slow_write', status: 'interrupted', arguments: { path: 'a.md' } }]);
    expect(waiting.enabledEvents).toEqual(['user_approved_tool_call', 'user_rejected_tool_call', 'user_gave_tool_result']);
    // Nothing ran again without a person: the server saw the call once, before the crash.
    expect(notes.calls()).toEqual([{ tool: 'slow_write', args: { path: 'a.md' } }]);
    // A decision for another call is refused; the person's result is what the model reads.
    const wrong = await resumed.send({ type: 'user_gave_tool_result', callId: 'k2', result: 'x' });
    expect(wrong.ok).toBe(false);
    const given = await resumed.send({ type: 'user_gave_tool_result', callId: 'k1', result: 'a.md holds the note.', by: 'ana', wait: waiting.wait! });
    expect(given.ok && given.view.state).toBe('waiting_user.review_artifact');
    expect(told).toBe('(A person gave this result by hand: the call was cut off when the process running it stopped.)\na.md holds the note.');
    expect(notes.calls()).toEqual([{ tool: 'slow_write', args: { path: 'a.md' } }]);
    await resumed.close();
  }, 120_000);
});
