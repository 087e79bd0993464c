/**
 * The audit trail of waits that deadlines ended: a deadline that escalated a wait or rejected
 * it (expired) is a row by Steward, through `deadline`, with the rule in its details; a
 * reminder decides nothing and a decision by someone outside the wait's groups
 * (`not_a_decider`) was refused: neither is a row. The runtime's timer is played by the test
 * (`deadline_passed` sent to the session's actor), and its journal entries are written as the
 * runtime journals them (`{ type, wait, level, at, by: 'steward', through: 'deadline' }`), in
 * their place among the entries the store holds. A tool wait's calls still undecided each get a row.
 */
import { describe, expect, it } from 'vitest';
import { fromPromise } from 'xstate';
import { createRuntime, MemoryStore, type Session } from '../../src/index.js';
import { snapshotState } from '../../src/core/machines/refusals.js';
import { sessionMachine } from '../../src/machine.js';
import { scriptedCall, ScriptedModel, testingPackage, workerReplies } from '../../src/testing.js';
import type { ToolCallInput, ToolCallOutput } from '../../src/core/tools/server-tools.js';
import { submitReply } from '../tools/notes-package.js';
import { auditRows } from '../../src/runtime/audit-rows.js';
import { AuditRowSchema, AUDIT_COLUMNS } from '../../src/runtime/audit-row.js';
import { auditLine } from '../../src/runtime/audit-output.js';
import { readJournal } from '../../src/runtime/journal-waits.js';
import type { JournalEntry } from '../../src/store/session-store.js';
import { everyOutcome } from '../support/every-outcome.js';
import { useTempDir } from '../support/temp.js';

const temp = useTempDir('steward-deadline-audit-');
import { parseCsv } from './csv-parse.js';
import { shownHash } from './audit-session.js';

/** A journal as the store would hold it with the deadline entries the runtime writes: each after the stored entry it followed. */
class DeadlineJournal {
  private readonly inserted: { after: number; entry: Omit<JournalEntry, 'seq'> }[] = [];
  constructor(
    private readonly store: MemoryStore,
    private readonly session: Session,
  ) {}

  /** The runtime's timer: the deadline of `wait` at rule `level` passed. */
  async passes(wait: number, level: number): Promise<void> {
    const after = (await readJournal(this.store, this.session.id)).length;
    const at = new Date().toISOString();
    this.session.actorRef.send({ type: 'deadline_passed', wait, level });
    const payload = { type: 'deadline_passed', wait, level, at, by: 'steward', through: 'deadline' };
    const state = snapshotState(this.session.actorRef.getSnapshot());
    this.inserted.push({ after, entry: { sessionId: this.session.id, at, kind: 'event', type: 'deadline_passed', payload, state } });
    await this.session.settled();
  }

  async entries(): Promise<JournalEntry[]> {
    const stored = await readJournal(this.store, this.session.id);
    const all = [...this.inserted.filter((i) => i.after === 0).map((i) => i.entry)];
    for (const entry of stored) all.push(entry, ...this.inserted.filter((i) => i.after === entry.seq).map((i) => i.entry));
    return all.map((entry, i) => ({ ...entry, seq: i + 1 }));
  }
}

describe('the audit trail of deadlines', () => {
  it('an escalation and an expiry are rows by steward through deadline; a reminder and a refused outsider are none', async () => {
    const model = new ScriptedModel([
      { agent: 'manager', toolCalls: [scriptedCall('run_worker', { workerId: 'echo', reason: 'Note it.', requiresApproval: true })] },
      { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { note: 'Otters hold hands.' } })] },
    ]);
    const store = new MemoryStore();
    const runtime = createRuntime({ model, store, ...everyOutcome(temp.path('packages')) });
    const session = await runtime.createSession({ packageId: 'tiny' });
    const journal = new DeadlineJournal(store, session);

    await session.send({ type: 'user_submitted_input', text: 'A note about otters.', by: 'ana' });
    const approval = session.view();
    expect(approval).toMatchObject({ waitingReason: 'approve_step', wait: 2, deciders: ['ops'] });
    const outsider = await session.send({ type: 'user_approved_next_step', wait: 2, by: 'eve', groups: ['outsiders'] });
    expect(outsider.ok).toBe(false);
    await journal.passes(2, 0);
    const escalated = session.view();
    expect(escalated).toMatchObject({ waitingReason: 'approve_step', wait: 3, deciders: ['leads'] });
    const approved = await session.send({ type: 'user_approved_next_step', wait: 3, by: 'lena', groups: ['leads'], through: 'cli' });
    expect(approved.ok && approved.view).toMatchObject({ waitingReason: 'review_artifact', wait: 4 });
    const review = session.view();
    await journal.passes(4, 0);
    const escalatedReview = session.view();
    await journal.passes(5, 1); // a reminder
    await journal.passes(5, 2);
    expect(session.view()).toMatchObject({ waitingReason: 'revision', wait: 6 });

    const entries = await journal.entries();
    const rows = [...auditRows(runtime, session.id, entries)];
    for (const row of rows) AuditRowSchema.parse(row);
    const seqOf = (wait: number, level: number) =>
      entries.find(
        (e) => e.type === 'deadline_passed' && (e.payload as { wait: number; level: number }).wait === wait && (e.payload as { level: number }).level === level,
      )!.seq;
    const byDeadline = { by: 'steward', via: null, through: 'deadline', event: 'deadline_passed', edits: null };

    expect(rows.map((r) => [r.wait, r.waitingReason, r.decision, r.by])).toEqual([
      [1, 'intake', 'submitted', 'ana'],
      [2, 'approve_step', 'escalated', 'steward'],
      [3, 'approve_step', 'approved', 'lena'],
      [4, 'review_artifact', 'escalated', 'steward'],
      [5, 'review_artifact', 'expired', 'steward'],
    ]);
    expect(rows[1]).toMatchObject({
      ...byDeadline,
      subject: 'echo',
      details: { level: 0, after: '1h', to: 'leads' },
      decidedSeq: seqOf(2, 0),
      closedSeq: seqOf(2, 0),
      shownSha256: shownHash(approval),
    });
    // The escalated wait opened with the deadline's entry, and a person of the group it went to decided it.
    expect(rows[2]).toMatchObject({ openedSeq: seqOf(2, 0), by: 'lena', through: 'cli', shownSha256: shownHash(escalated) });
    expect(rows[3]).toMatchObject({ ...byDeadline, subject: 'a1', details: { level: 0, after: '1h', to: 'leads' }, shownSha256: shownHash(review) });
    // The reminder between left the wait open: the expiry closes wait 5, which opened with the escalation.
    expect(rows[4]).toMatchObject({
      ...byDeadline,
      subject: 'a1',
      details: { level: 2, after: '1h' },
      openedSeq: seqOf(4, 0),
      decidedSeq: seqOf(5, 2),
      closedSeq: seqOf(5, 2),
      decidedAt: (entries[seqOf(5, 2) - 1]!.payload as { at: string }).at,
      shownSha256: shownHash(escalatedReview),
    });

    // In CSV, the decision and the rule read as they are.
    const [cells] = parseCsv(auditLine(rows[4]!, 'csv'));
    const cell = (column: string) => cells![AUDIT_COLUMNS.indexOf(column as never)];
    expect([cell('by'), cell('through'), cell('decision'), cell('details')]).toEqual(['steward', 'deadline', 'expired', '{"after":"1h","level":2}']);
  });
});

describe('the audit trail of a tool wait’s deadline', () => {
  it('gives each call still undecided a row of its own; a call decided before keeps its decision', async () => {
    const replies = workerReplies(testingPackage, 'noter');
    let turns = 0;
    const machine = sessionMachine.provide({
      actors: {
        workerTurn: fromPromise(async () => (++turns === 1 ? replies.tool_three_writes! : submitReply('Done.'))) as never,
        toolCall: fromPromise<ToolCallOutput, ToolCallInput>(async ({ input }) => ({
          callId: input.item.callId,
          outcome: 'result',
          text: 'ok',
          isError: false,
        })),
      },
    });
    const model = new ScriptedModel([
      { agent: 'manager', toolCalls: [scriptedCall('run_worker', { workerId: 'echo', reason: 'Write them.', requiresApproval: false })] },
    ]);
    const store = new MemoryStore();
    const runtime = createRuntime({ model, store, machine, ...everyOutcome(temp.path('packages')) });
    const session = await runtime.createSession({ packageId: 'tiny' });
    const journal = new DeadlineJournal(store, session);
    await session.send({ type: 'user_submitted_input', text: 'Write the notes.' });
    const shown = session.view();
    expect(shown).toMatchObject({ waitingReason: 'approve_tool', wait: 2, deciders: ['ops'] });
    const pending = shown.toolCalls!.filter((c) => c.status === 'pending').map((c) => c.callId);
    expect(pending.length).toBeGreaterThan(1);
    const [first, ...rest] = pending;
    const approved = await session.send({ type: 'user_approved_tool_call', callId: first!, by: 'olga', groups: ['ops'] });
    expect(approved.ok && approved.view.waitingReason).toBe('approve_tool');
    await journal.passes(2, 0); // escalated to leads: wait 3
    const escalated = session.view();
    await journal.passes(3, 1); // a reminder
    await journal.passes(3, 2); // expired: the calls still undecided are rejected, the approved one runs

    const rows = [...auditRows(runtime, session.id, await journal.entries())].filter((r) => r.waitingReason === 'approve_tool');
    for (const row of rows) AuditRowSchema.parse(row);
    expect(rows.map((r) => [r.wait, r.subject, r.decision, r.by, r.through])).toEqual([
      [2, first, 'approved', 'olga', null],
      ...rest.map((callId) => [2, callId, 'escalated', 'steward', 'deadline']),
      ...rest.map((callId) => [3, callId, 'expired', 'steward', 'deadline']),
    ]);
    // Each row hashes the call it decided, as the wait showed it.
    expect(rows[1]!.shownSha256).toBe(shownHash(shown, rest[0]));
    expect(rows.at(-1)!.shownSha256).toBe(shownHash(escalated, rest.at(-1)));
    expect(rows.at(-1)!.details).toEqual({ level: 2, after: '1h' });
  });
});
