/**
 * The audit trail of a session driven through the runtime: one row per decision, each with its
 * wait, who decided and through what, the decision and its edits, and the hash of what the
 * person was shown, recomputed here from the view they saw.
 */
import { describe, expect, it } from 'vitest';
import { createRuntime, MemoryStore, type SessionView } from '../../src/index.js';
import { sessionAuditRows } from '../../src/runtime/audit-rows.js';
import { AuditRowSchema } from '../../src/runtime/audit-row.js';
import { AUDIT_DECISIONS, auditModel, expectAuditRows } from './audit-session.js';

describe('the audit trail of a session', () => {
  it('has one row per decision, field by field, with the hash of what each wait showed', async () => {
    const store = new MemoryStore();
    const runtime = createRuntime({ model: auditModel(), store });
    const session = await runtime.createSession({ packageId: 'short-story' });
    const views: SessionView[] = [];
    for (const decision of AUDIT_DECISIONS) {
      views.push(session.view());
      const result = await session.send({ ...decision, through: 'cli' });
      expect(result.ok, decision.type).toBe(true);
    }
    expect(session.view().phase).toBe('done');
    // A refused decision is no row.
    expect((await session.send({ type: 'user_confirmed_intake' })).ok).toBe(false);

    const rows = [...(await sessionAuditRows(runtime, store, session.id))];
    for (const row of rows) AuditRowSchema.parse(row);
    expectAuditRows(rows, session.id, views, 'cli');
    // What the person saw differs from wait to wait, and the step the approval edited is the one shown.
    expect(new Set(rows.map((r) => r.shownSha256)).size).toBe(rows.length);
    expect(views[2]!.pendingStep).toMatchObject({ reason: 'Write it now.' });
  });

  it('replays past refusals send() decided before the machine saw the event: they are no rows, and a fork after them starts where the session was', async () => {
    const store = new MemoryStore();
    const runtime = createRuntime({ model: auditModel(), store });
    const session = await runtime.createSession({ packageId: 'short-story' });
    await session.send({ type: 'user_submitted_input', text: 'A ghost story.' });
    // A reserved name and a malformed event: journalled as `{ type, refused }`, never seen by the chart.
    expect((await session.send({ type: 'user_approved_next_step', by: 'steward' })).ok).toBe(false);
    expect((await session.send({ type: 'user_approved_next_step', edits: {} } as never)).ok).toBe(false);
    const journal = await store.journal(session.id);
    expect(journal.slice(-2).map((e) => [e.type, e.state, Object.keys(e.payload as object)])).toEqual([
      ['user_approved_next_step', 'waiting_user.approve_step', ['type', 'refused']],
      ['user_approved_next_step', 'waiting_user.approve_step', ['type', 'refused']],
    ]);
    const rows = [...(await sessionAuditRows(runtime, store, session.id))];
    expect(rows.map((r) => [r.wait, r.decision, r.closedSeq])).toEqual([[1, 'submitted', 2]]);
    const fork = await runtime.forkSession(session.id, { atSeq: journal.length });
    expect(fork.view()).toMatchObject({ waitingReason: 'approve_step', wait: 2 });
  });

  it('says null for a surface the journal does not name', async () => {
    const store = new MemoryStore();
    const runtime = createRuntime({ model: auditModel(), store });
    const session = await runtime.createSession({ packageId: 'short-story' });
    await session.send({ type: 'user_submitted_input', text: 'A ghost story.' });
    const [row] = [...(await sessionAuditRows(runtime, store, session.id))];
    expect(row).toMatchObject({ by: null, via: null, through: null, decision: 'submitted', closedSeq: 2 });
  });
});
