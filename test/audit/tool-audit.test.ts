/**
 * The audit trail of a worker's MCP tool calls: one wait, several calls decided one by one
 * (approved with edited arguments, rejected with a reason): a row per call, each held open
 * until the last decision closes the wait, and each hashing the call the person was shown.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime, MemoryStore, type Runtime } from '../../src/index.js';
import { scriptedCall, ScriptedModel } from '../../src/testing.js';
import { auditRows } from '../../src/runtime/audit-rows.js';
import { readJournal } from '../../src/runtime/journal-waits.js';
import { notesPackage, runKeeper, submitReply } from '../tools/notes-package.js';
import { shownHash } from './audit-session.js';

const runtimes: Runtime[] = [];
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((r) => r.close()));
});

describe('the audit trail of tool calls', { timeout: 120_000 }, () => {
  it('has a row per decided call, by whom and through what, with the edited arguments and the call shown', async () => {
    const notes = notesPackage();
    const model = new ScriptedModel([
      { agent: 'manager', toolCalls: [runKeeper()] },
      {
        agent: 'worker',
        toolCalls: [scriptedCall('notes__write_note', { path: 'a.md', text: 'One' }, 'c1'), scriptedCall('notes__delete_note', { path: 'b.md' }, 'c2')],
      },
      () => submitReply('Kept.'),
    ]);
    const store = new MemoryStore();
    const runtime = createRuntime({ model, store, packagesDir: notes.packagesDir, toolHost: { env: notes.env, log: () => {} } });
    runtimes.push(runtime);
    const session = await runtime.createSession({ packageId: 'notes' });
    await session.send({ type: 'user_submitted_input', text: 'Keep my notes.' });
    const shown = session.view();
    expect(shown.waitingReason).toBe('approve_tool');

    const approved = await session.send({
      type: 'user_approved_tool_call',
      callId: 'c1',
      arguments: { path: 'a.md', text: 'Edited' },
      by: 'ana',
      groups: ['ops'],
      through: 'inspector',
    });
    expect(approved.ok && approved.view.waitingReason).toBe('approve_tool');
    // While the wait is open, the decision so far is a row whose wait has not closed.
    const open = [...auditRows(runtime, session.id, await readJournal(store, session.id))];
    expect(open.at(-1)).toMatchObject({ subject: 'c1', decision: 'approved', closedSeq: null, closedAt: null });

    const rejected = await session.send({ type: 'user_rejected_tool_call', callId: 'c2', reason: 'Keep b.', by: 'bob', through: 'cli' });
    expect(rejected.ok).toBe(true);
    const rows = [...auditRows(runtime, session.id, await readJournal(store, session.id))].filter((r) => r.waitingReason === 'approve_tool');
    const [first, second] = rows;
    expect(rows).toHaveLength(2);
    expect(first).toEqual({
      sessionId: session.id,
      wait: shown.wait,
      waitingReason: 'approve_tool',
      openedSeq: expect.any(Number),
      openedAt: expect.any(String),
      decidedSeq: expect.any(Number),
      decidedAt: expect.any(String),
      closedSeq: second!.decidedSeq,
      closedAt: second!.decidedAt,
      by: 'ana',
      via: null,
      groups: ['ops'],
      through: 'inspector',
      event: 'user_approved_tool_call',
      decision: 'approved',
      subject: 'c1',
      edits: { path: 'a.md', text: 'Edited' },
      details: null,
      shownSha256: shownHash(shown, 'c1'),
    });
    expect(second).toEqual({
      ...first,
      decidedSeq: second!.decidedSeq,
      decidedAt: second!.decidedAt,
      by: 'bob',
      groups: null,
      through: 'cli',
      event: 'user_rejected_tool_call',
      decision: 'rejected',
      subject: 'c2',
      edits: null,
      details: { reason: 'Keep b.' },
      shownSha256: shownHash(shown, 'c2'),
    });
    expect(first!.decidedSeq).toBeLessThan(second!.decidedSeq);
    expect(first!.shownSha256).not.toBe(second!.shownSha256);
  });
});
