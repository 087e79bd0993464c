/**
 * Waits that end on time and the groups that decide them, on the chart alone (deadlines.ts):
 * an approval's deadline escalates it to another group as a new wait, reminds, then rejects
 * it — never approves it; a deadline fired twice changes nothing the second time; a decision
 * by someone outside the wait's groups is refused with its own code, as is one for the wait
 * before the escalation. The deadline rules are checked where they are written.
 */
import { describe, expect, it } from 'vitest';
import { createActor, fromPromise, type AnyEventObject } from 'xstate';
import { sessionMachine, type PackageInfo, type TurnOutput } from '../../src/machine.js';
import { managerReplies, testingPackage, workerReplies } from '../../src/testing.js';
import { DeadlinesSchema, type DeadlinePolicy } from '../../src/core/machines/deadlines.js';
import type { SessionSnapshot } from '../../src/core/machines/session-snapshot.js';

const chain = (after: string) => ({
  after: '1h',
  outcome: 'escalate' as const,
  to: 'leads',
  then: { after: '30m', outcome: 'remind' as const, then: { after, outcome: 'reject' as const } },
});

/** A session of the test package whose first worker `noter` is decided by `ops`, with these deadlines, at its first wait after `manager` replied. */
function sessionAt(deadlines: DeadlinePolicy, manager: TurnOutput, worker?: TurnOutput) {
  const pkg: PackageInfo = {
    ...testingPackage,
    deadlines: DeadlinesSchema.parse(deadlines) as DeadlinePolicy,
    workers: testingPackage.workers.map((w, i) => (i === 0 ? { ...w, approvers: ['ops'], reviewers: ['editors'] } : w)),
  };
  const machine = sessionMachine.provide({
    actors: {
      managerTurn: fromPromise(async () => manager) as never,
      workerTurn: fromPromise(async () => worker ?? workerReplies(pkg, 'noter').submit!) as never,
    },
  });
  const emitted: AnyEventObject[] = [];
  const actor = createActor(machine, { input: { sessionId: 's', package: pkg } });
  actor.on('*', (e) => emitted.push(e));
  actor.start();
  actor.send({ type: 'user_submitted_input', text: 'A note about otters.' });
  return { actor, emitted };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));
const state = (s: SessionSnapshot) => JSON.stringify(s.value);

describe('a wait with a deadline and deciders (the chart)', () => {
  it('an approval escalates to another group as a new wait, reminds, then is rejected: never approved; old decisions and outsiders are refused', async () => {
    const { actor, emitted } = sessionAt({ approve_step: chain('15m') }, managerReplies(testingPackage).run_worker_with_approval!);
    await settle();
    let snap = actor.getSnapshot();
    expect(snap.matches({ waiting_user: 'approve_step' })).toBe(true);
    const first = snap.context.waits.opened;
    expect(snap.context.waits).toMatchObject({ deciders: ['ops'], deadline: { level: 0, after: '1h', outcome: 'escalate', to: 'leads' } });

    // Someone outside `ops`: refused with its own code; nothing else changes.
    actor.send({ type: 'user_approved_next_step', wait: first, by: 'sam', groups: ['sales'] });
    snap = actor.getSnapshot();
    expect(snap.context.rejections.at(-1)).toMatchObject({ code: 'not_a_decider', type: 'user_approved_next_step' });
    expect(snap.context.rejections.at(-1)!.reason).toContain('only the groups ops (or admin)');
    expect(snap.matches({ waiting_user: 'approve_step' })).toBe(true);

    // The first deadline: escalated to `leads`, as the next wait.
    emitted.length = 0;
    actor.send({ type: 'deadline_passed', wait: first, level: 0 });
    snap = actor.getSnapshot();
    expect(snap.matches({ waiting_user: 'approve_step' })).toBe(true);
    expect(snap.context.waits).toMatchObject({ opened: first + 1, deciders: ['leads'], deadline: { level: 1, outcome: 'remind' } });
    expect(emitted.map((e) => e.type)).toEqual(['deadline_passed', 'decision', 'waiting']);
    expect(emitted[0]).toMatchObject({ outcome: 'escalate', to: 'leads', wait: first, level: 0, reason: 'approve_step' });
    expect(emitted[1]).toMatchObject({ by: 'steward', eventType: 'deadline_passed', wait: first });
    expect(emitted[2]).toMatchObject({ wait: first + 1 });

    // The same deadline again (a timer fired twice): refused, nothing moves.
    const before = state(snap);
    actor.send({ type: 'deadline_passed', wait: first, level: 0 });
    snap = actor.getSnapshot();
    expect(snap.context.rejections.at(-1)).toMatchObject({ code: 'deadline_stale' });
    expect(state(snap)).toBe(before);
    expect(snap.context.waits.opened).toBe(first + 1);

    // `ops` deciding the wait that was escalated away: wait_closed; deciding the new one: not theirs any more.
    actor.send({ type: 'user_approved_next_step', wait: first, groups: ['ops'] });
    expect(actor.getSnapshot().context.rejections.at(-1)).toMatchObject({ code: 'wait_closed' });
    actor.send({ type: 'user_approved_next_step', wait: first + 1, groups: ['ops'] });
    expect(actor.getSnapshot().context.rejections.at(-1)).toMatchObject({ code: 'not_a_decider' });

    // A reminder: the wait stays, the next rule starts.
    emitted.length = 0;
    actor.send({ type: 'deadline_passed', wait: first + 1, level: 1 });
    snap = actor.getSnapshot();
    expect(snap.matches({ waiting_user: 'approve_step' })).toBe(true);
    expect(snap.context.waits).toMatchObject({ opened: first + 1, deadline: { level: 2, outcome: 'reject', after: '15m' } });
    expect(emitted.map((e) => e.type)).toEqual(['deadline_passed', 'waiting']);
    expect(emitted[0]).toMatchObject({ outcome: 'remind' });

    // The last rule: rejected. The manager is told nobody decided in time; no worker runs.
    actor.send({ type: 'deadline_passed', wait: first + 1, level: 2 });
    snap = actor.getSnapshot();
    expect(snap.matches({ running: 'manager' })).toBe(true);
    expect(snap.context.step).toBeNull();
    expect(snap.context.waits).toMatchObject({ answered: { wait: first + 1 } });
    expect(snap.context.transcripts.manager.messages.at(-1)).toEqual({
      role: 'user',
      content: 'Nobody decided on the proposed step run_worker(noter) within 15m, so it was rejected: it did not run.',
    });
    actor.stop();
  });

  it('a member of the group, or of admin, decides', async () => {
    for (const groups of [['ops'], ['admin'], ['sales', 'ops']]) {
      const { actor } = sessionAt({}, managerReplies(testingPackage).run_worker_with_approval!);
      await settle();
      actor.send({ type: 'user_approved_next_step', groups });
      expect(actor.getSnapshot().matches({ running: 'worker' }), groups.join()).toBe(true);
      expect(actor.getSnapshot().context.rejections).toEqual([]);
      actor.stop();
    }
    // No groups at all (an app that stamps none): refused, naming who may decide.
    const { actor } = sessionAt({}, managerReplies(testingPackage).run_worker_with_approval!);
    await settle();
    actor.send({ type: 'user_rejected_next_step', by: 'ana' });
    expect(actor.getSnapshot().context.rejections.at(-1)).toMatchObject({ code: 'not_a_decider' });
    expect(actor.getSnapshot().context.rejections.at(-1)!.reason).toMatch(/^"ana" may not decide wait \d+/);
    actor.stop();
  });

  it("an artifact's review expires into a rejection (the revision waits), decided by its reviewers", async () => {
    // The catalogue's run_worker_without_approval runs the second worker: in a package of the first alone, it runs the first (decided by `editors`).
    const pkgRun = managerReplies({ ...testingPackage, workers: [testingPackage.workers[0]!] }).run_worker_without_approval!;
    const second = sessionAt({ review_artifact: { after: '2d', outcome: 'reject' } }, pkgRun);
    await settle();
    await settle();
    let snap = second.actor.getSnapshot();
    expect(snap.matches({ waiting_user: 'review_artifact' })).toBe(true);
    expect(snap.context.waits).toMatchObject({ deciders: ['editors'], deadline: { level: 0, outcome: 'reject', after: '2d' } });
    second.actor.send({ type: 'deadline_passed', wait: snap.context.waits.opened, level: 0 });
    snap = second.actor.getSnapshot();
    expect(snap.matches({ waiting_user: 'revision' })).toBe(true);
    expect(snap.context.artifacts[0]).toMatchObject({ status: 'rejected' });
    expect(snap.context.step?.revisionNotes).toBe('Nobody decided within 2d.');
    second.actor.stop();
  });

  it("a tool-call wait's deadline rejects the calls not yet decided; the approved one runs", async () => {
    const pkg = { ...testingPackage, workers: [testingPackage.workers[0]!] };
    const calls: string[] = [];
    const machine = sessionMachine.provide({
      actors: {
        managerTurn: fromPromise(async () => managerReplies(pkg).run_worker_without_approval!) as never,
        workerTurn: fromPromise(async () => workerReplies(pkg, 'noter').tool_three_writes!) as never,
        toolCall: fromPromise(async ({ input }: { input: { item: { callId: string } } }) => {
          calls.push(input.item.callId);
          return new Promise(() => {}) as never;
        }) as never,
      },
    });
    const actor = createActor(machine, {
      input: { sessionId: 's', package: { ...pkg, deadlines: { approve_tool: { after: '10m', outcome: 'reject' } } } },
    }).start();
    actor.send({ type: 'user_submitted_input', text: 'Write both.' });
    await settle();
    await settle();
    let snap = actor.getSnapshot();
    expect(snap.matches({ waiting_user: 'approve_tool' })).toBe(true);
    actor.send({ type: 'user_approved_tool_call', callId: 'call_t3' });
    actor.send({ type: 'deadline_passed', wait: snap.context.waits.opened, level: 0 });
    snap = actor.getSnapshot();
    const status = Object.fromEntries((snap.context.reply.toolCalls ?? []).map((c) => [c.callId, c.status]));
    expect(status.call_t5).toBe('rejected');
    expect(snap.context.reply.toolCalls?.find((c) => c.callId === 'call_t5')).toMatchObject({ decidedBy: 'steward', reason: 'Nobody decided within 10m.' });
    expect(calls).toEqual(['call_t3']);
    actor.stop();
  });
});

describe('deadline rules as written', () => {
  const problem = (policy: unknown) => {
    const parsed = DeadlinesSchema.safeParse(policy);
    return parsed.success ? null : parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
  };

  it('takes a chain per wait, rejecting by default', () => {
    expect(DeadlinesSchema.parse({ approve_step: { after: '24h' } })).toEqual({ approve_step: { after: '24h', outcome: 'reject' } });
    expect(problem({ input: { after: '30m', outcome: 'remind', then: { after: '1d', outcome: 'remind' } } })).toBeNull();
  });

  it('refuses what cannot happen, naming the fix', () => {
    expect(problem({ input: { after: '30m' } })).toContain('"input" waits for no decision a deadline can make: only "remind" applies there');
    expect(problem({ approve_step: { after: '1h', outcome: 'escalate' } })).toContain('names the group the wait goes to ("to")');
    expect(problem({ approve_step: { after: '1 hour' } })).toContain('like "90s", "30m", "24h" or "7d"');
    expect(problem({ approve_step: { after: '400d' } })).toContain('at most 366 days');
    expect(problem({ approve: { after: '1h' } })).toContain('names a wait Steward does not have (approve)');
    // Data never walks a prototype chain: a key named "__proto__" is refused by name, not dropped unseen.
    expect(problem(JSON.parse('{"__proto__": {"after": "1h", "outcome": "remind"}}'))).toContain('names a wait Steward does not have (__proto__)');
    let deep: Record<string, unknown> = { after: '1h', outcome: 'remind' };
    for (let i = 0; i < 8; i++) deep = { after: '1h', outcome: 'remind', then: deep };
    expect(problem({ approve_step: deep })).toContain('chains at most 8 rules');
  });
});
