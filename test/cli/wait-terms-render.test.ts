/**
 * `steward show` and the interactive prompt (both print `waitBlocks`) tell by when a wait must
 * be decided, what happens then, and who may decide it; group names are data, printed safe.
 */
import { describe, expect, it } from 'vitest';
import { createRuntime, MemoryStore } from '../../src/index.js';
import { sessionView } from '../../src/core/view.js';
import { scriptedCall, ScriptedModel } from '../../src/testing.js';
import pc from 'picocolors';
import { formatSession, waitBlocks } from '../../src/cli/render.js';
import { waitTermsLines } from '../../src/core/wait-terms.js';
import { everyOutcome } from '../support/every-outcome.js';
import { useTempDir } from '../support/temp.js';

/** The terminal's text without colours, as a command that writes to a pipe prints it. */
const plain = pc.createColors(false);

const temp = useTempDir('steward-wait-terms-');

const DUE = '2026-12-07T09:00:00.000Z';

describe('a wait’s deadline and deciders, for the terminal', () => {
  it('shows the due time and what happens then, and the groups that decide; a wait without them shows neither', async () => {
    const model = new ScriptedModel([
      { agent: 'manager', toolCalls: [scriptedCall('run_worker', { workerId: 'echo', reason: 'Note it.', requiresApproval: true })] },
    ]);
    const runtime = createRuntime({ model, store: new MemoryStore(), ...everyOutcome(temp.path('packages')) });
    const session = await runtime.createSession({ packageId: 'tiny' });
    expect(waitBlocks(session.view()).map((b) => b.title)).not.toContain('Deadline');
    await session.send({ type: 'user_submitted_input', text: 'A note about otters.' });

    const out = formatSession(sessionView(session.actorRef.getSnapshot(), undefined, { dueAt: DUE }), 3, { colors: plain });
    expect(out).toContain(`Decide by ${DUE} (then: escalated to leads).\nDecided by: ops (or admin).`);
    // Read without the runtime's due time: the rule's interval.
    const unstamped = () => sessionView(session.actorRef.getSnapshot());
    expect(waitTermsLines(unstamped())).toEqual(['Decide within 1h (then: escalated to leads).', 'Decided by: ops (or admin).']);

    session.actorRef.send({ type: 'deadline_passed', wait: 2, level: 0 });
    expect(waitTermsLines(unstamped())).toEqual(['Decide within 1h (then: reminded).', 'Decided by: leads (or admin).']);
    session.actorRef.send({ type: 'deadline_passed', wait: 3, level: 1 });
    expect(waitTermsLines(unstamped())).toEqual(['Decide within 1h (then: rejected).', 'Decided by: leads (or admin).']);
    // The live session's own view has its due time.
    expect(waitTermsLines(session.view())[0]).toMatch(/^Decide by \d{4}-\d\d-\d\dT[\d:.]+Z \(then: rejected\)\.$/);
  });

  it('prints group names as data: no terminal control sequence gets through', () => {
    const [block] = waitBlocks({
      id: 's_1',
      packageId: null,
      state: 'waiting_user.approve_step',
      phase: 'waiting_user',
      waitingReason: 'approve_step',
      wait: 2,
      burst: 0,
      maxBurst: 12,
      blackboard: [],
      artifacts: [],
      acceptedEvents: [],
      enabledEvents: [],
      rejections: [],
      usage: { promptTokens: 0, completionTokens: 0 },
      rounds: 0,
      tokens: { burst: 0, session: 0, maxBurst: null },
      packageVersion: null,
      deadline: { level: 0, outcome: 'escalate', after: '1h', to: 'leads\u001b]8;;https://evil.example\u0007', dueAt: DUE },
      deciders: ['ops\u001b[2J'],
    }).filter((b) => b.title === 'Deadline');
    expect(block!.body).not.toContain('\u001b');
    expect(block!.body).not.toContain('\u0007');
    expect(block!.body).toContain('escalated to leads');
  });
});
