/**
 * A short-story session that goes through every kind of person's decision the audit trail
 * records (but tool calls: tool-audit.test.ts): a request, a step rejected with a reason, the
 * step approved with edits, an artifact rejected, the revision asked for, the revised artifact
 * accepted with an edit, the manager's question answered. `expectedRows` says, from the views
 * the person was shown, what each row must be; the hash is computed here from the view, as
 * docs/design.md ("Audit trail") says an auditor computes it.
 */
import { createHash } from 'node:crypto';
import { expect } from 'vitest';
import type { SessionView, UserEvent } from '../../src/index.js';
import { canonicalJson } from '../../src/core/text/canonical-json.js';
import { scriptedCall, ScriptedModel } from '../../src/testing.js';
import type { AuditRow } from '../../src/runtime/audit-row.js';

export const auditModel = () =>
  new ScriptedModel([
    { agent: 'manager', toolCalls: [scriptedCall('run_worker', { workerId: 'drafter', reason: 'Write the story.', requiresApproval: true, roleId: 'genre' })] },
    { agent: 'manager', toolCalls: [scriptedCall('run_worker', { workerId: 'drafter', reason: 'Write it now.', requiresApproval: true })] },
    { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { draft: 'A loud draft.' } })] },
    { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { draft: 'A soft draft.' } })] },
    { agent: 'manager', toolCalls: [scriptedCall('ask_user', { message: 'Shall I finish?', questions: ['Finish now?'] })] },
    { agent: 'manager', toolCalls: [scriptedCall('finish', { summary: 'Done.' })] },
  ]);

/** The decisions, in order: each sent at the wait before it. */
export const AUDIT_DECISIONS: UserEvent[] = [
  { type: 'user_submitted_input', text: 'A ghost story.', by: 'ana' },
  { type: 'user_rejected_next_step', reason: 'Not =yet, "please".', by: 'bob' },
  { type: 'user_approved_next_step', edits: { reason: 'Write it quietly.', roleId: 'literary' }, by: 'bob' },
  { type: 'user_rejected_artifact', artifactId: 'a1', reason: 'Too loud.', by: 'ana' },
  { type: 'user_submitted_input', text: 'Softer, please.', by: 'ana' },
  { type: 'user_accepted_artifact', artifactId: 'a2', edits: { draft: 'A soft, edited draft.' }, by: 'carl' },
  { type: 'user_answered_questions', answers: { q1: 'Yes.' }, by: 'ana' },
];

/** What a wait showed, as docs/design.md lists it, built by hand from the view. */
export function shownHash(view: SessionView, callId?: string): string {
  const shown: Record<string, unknown> = { waitingReason: view.waitingReason };
  if (view.waitingReason === 'approve_step')
    shown.step = { workerId: view.pendingStep!.workerId, roleId: view.pendingStep!.roleId, reason: view.pendingStep!.reason };
  if (view.artifact)
    shown.artifact = {
      id: view.artifact.id,
      workerId: view.artifact.workerId,
      roleId: view.artifact.roleId,
      tags: view.artifact.tags.map((t) => ({ tag: t.tag, version: t.version, body: t.body })),
    };
  if (view.message !== undefined) shown.message = view.message;
  if (view.assessment !== undefined) shown.assessment = view.assessment;
  if (view.questions) shown.questions = view.questions.map((q) => ({ id: q.id, text: q.text }));
  const call = view.toolCalls?.find((c) => c.callId === callId);
  if (call)
    shown.toolCall = { callId, server: call.server, tool: call.tool, arguments: call.arguments, description: call.description, input: call.input?.requests };
  return createHash('sha256').update(canonicalJson(shown)).digest('hex');
}

/** The rows `views` (the view at each wait, before its decision) and the decisions must give; times and seqs are checked for order only. */
export function expectAuditRows(
  rows: AuditRow[],
  sessionId: string,
  views: SessionView[],
  through: AuditRow['through'],
  via: string | null = null,
  groups: string[] | null = null,
): void {
  const expected = [
    {
      waitingReason: 'intake',
      event: 'user_submitted_input',
      decision: 'submitted',
      subject: null,
      edits: null,
      details: { text: 'A ghost story.' },
      by: 'ana',
    },
    {
      waitingReason: 'approve_step',
      event: 'user_rejected_next_step',
      decision: 'rejected',
      subject: 'drafter',
      edits: null,
      details: { reason: 'Not =yet, "please".' },
      by: 'bob',
    },
    {
      waitingReason: 'approve_step',
      event: 'user_approved_next_step',
      decision: 'approved',
      subject: 'drafter',
      edits: { reason: 'Write it quietly.', roleId: 'literary' },
      details: null,
      by: 'bob',
    },
    {
      waitingReason: 'review_artifact',
      event: 'user_rejected_artifact',
      decision: 'rejected',
      subject: 'a1',
      edits: null,
      details: { reason: 'Too loud.' },
      by: 'ana',
    },
    {
      waitingReason: 'revision',
      event: 'user_submitted_input',
      decision: 'submitted',
      subject: 'a1',
      edits: null,
      details: { text: 'Softer, please.' },
      by: 'ana',
    },
    {
      waitingReason: 'review_artifact',
      event: 'user_accepted_artifact',
      decision: 'accepted',
      subject: 'a2',
      edits: { draft: 'A soft, edited draft.' },
      details: null,
      by: 'carl',
    },
    {
      waitingReason: 'input',
      event: 'user_answered_questions',
      decision: 'answered',
      subject: null,
      edits: null,
      details: { answers: { q1: 'Yes.' } },
      by: 'ana',
    },
  ];
  expect(rows).toHaveLength(expected.length);
  rows.forEach((row, i) => {
    expect(row, `row ${i + 1}`).toEqual({
      sessionId,
      wait: i + 1,
      ...expected[i],
      via,
      groups,
      through,
      openedSeq: expect.any(Number),
      openedAt: expect.any(String),
      decidedSeq: expect.any(Number),
      decidedAt: expect.any(String),
      closedSeq: row.decidedSeq,
      closedAt: row.decidedAt,
      shownSha256: shownHash(views[i]!),
    });
    expect(row.openedSeq, `row ${i + 1}`).toBeLessThan(row.decidedSeq);
    expect(Date.parse(row.openedAt)).toBeLessThanOrEqual(Date.parse(row.decidedAt));
    // A wait opens with the decision before it (a rejected artifact opens the revision in the same entry) or after it.
    if (i > 0) expect(row.openedSeq).toBeGreaterThanOrEqual(rows[i - 1]!.decidedSeq);
  });
  expect(rows[0]!.openedSeq).toBe(1);
}
