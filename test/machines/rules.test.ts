/**
 * The rule table (src/core/machines/rules.ts) is the one place of a rule: the machine's refusal
 * edges name its rules, a failed check runs once per call, the messages the model gets are
 * the table's, and the docs list every rule with the table's words.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fromPromise, initialTransition, transition } from 'xstate';
import { RULES, ruleById } from '../../src/core/machines/rules.js';
import type { SessionContext, TurnOutput } from '../../src/core/machines/session.context.js';
import { sessionMachine } from '../../src/core/machines/session.machine.js';
import { packageInfo } from '../../src/runtime/runtime.js';
import { loadPackages } from '../../src/skills/index.js';

const never = fromPromise<TurnOutput, SessionContext>(() => new Promise<TurnOutput>(() => {}));
const machine = sessionMachine.provide({ actors: { managerTurn: never, workerTurn: never } });
const tiny = packageInfo(loadPackages().get('tiny')!);

function managerThinking() {
  const [start] = initialTransition(machine, { sessionId: 'rules', package: tiny, maxBurst: 4 });
  return transition(machine, start, { type: 'user_submitted_input', text: 'Otters.' })[0];
}
const toolCall = (name: string, args: unknown) => ({ id: `call_${name}`, type: 'function' as const, function: { name, arguments: JSON.stringify(args) } });

afterEach(() => vi.restoreAllMocks());

describe('the rule table', () => {
  it("holds the seed's six rules in order, then the token budget, one-boundary-per-reply and the fan-out's independence", () => {
    expect(RULES.map((r) => [r.contractRule, r.id])).toEqual([
      [1, 'actorMayUseTool'],
      [2, 'argumentsMatchSchema'],
      [3, 'workerIsRegistered'],
      [4, 'tagsWithinOutputTags'],
      [5, 'managerOmitsTagLists'],
      [6, 'burstWithinLimit'],
      [null, 'burstTokensWithinBudget'],
      [null, 'oneBoundaryPerReply'],
      [null, 'workersIndependent'],
    ]);
  });

  it("the machine's refusal edges are exactly the table's call rules, per actor, in the checking order", () => {
    const edges = (actor: 'manager' | 'worker') =>
      machine
        .getStateNodeById(`session.running.${actor}.checking`)
        .always!.map((t) => t.guard as { type?: string; params?: { actor: string; rule: string } } | undefined)
        .filter((g) => g?.type === 'breaksRule')
        .map((g) => {
          expect(g!.params!.actor).toBe(actor);
          return g!.params!.rule;
        });
    // The chart is the one place of the order: each call rule of the table for the actor, once.
    // Rule 6 and the token budget are checked before a round, not on a call.
    const burstRules = ['burstWithinLimit', 'burstTokensWithinBudget'];
    for (const actor of ['manager', 'worker'] as const) {
      const callRules = RULES.filter((r) => r.actors.includes(actor) && !burstRules.includes(r.id)).map((r) => r.id);
      expect([...edges(actor)].sort(), actor).toEqual([...callRules].sort());
      expect(new Set(edges(actor)).size).toBe(edges(actor).length);
    }
    // The tool contract's order, but the manager's rule 5 before rule 2: a passed inputTags gets its own message.
    expect(RULES.map((r) => r.id).filter((id) => edges('worker').includes(id))).toEqual(edges('worker'));
    const manager = edges('manager');
    expect(manager.indexOf('managerOmitsTagLists')).toBe(manager.indexOf('argumentsMatchSchema') - 1);
    expect(manager.filter((id) => id !== 'managerOmitsTagLists')).toEqual(
      RULES.map((r) => r.id).filter((id) => manager.includes(id) && id !== 'managerOmitsTagLists'),
    );
  });

  it("the model gets its structured violation's message", () => {
    const check = vi.spyOn(ruleById.actorMayUseTool, 'check');
    const [after] = transition(machine, managerThinking(), {
      type: 'xstate.done.actor.managerTurn',
      output: { content: null, toolCalls: [toolCall('fly_to_the_moon', {}), toolCall('ask_user', { message: 'Hi.' })] },
    });
    const violation = check.mock.results[0]!.value;
    expect(violation).toMatchObject({ rule: 'actorMayUseTool', data: { tool: 'fly_to_the_moon', actor: 'manager' } });
    expect(after.context.transcripts.manager.messages).toContainEqual({
      role: 'tool',
      tool_call_id: 'call_fly_to_the_moon',
      content: `Error: ${violation.message}`,
    });
    expect(after.value).toEqual({ waiting_user: 'intake' });
  });

  it('docs/design.md lists every rule with its label and doc text', () => {
    const design = readFileSync(new URL('../../docs/design.md', import.meta.url), 'utf8');
    for (const rule of RULES) {
      expect(design, rule.id).toContain(`\`${rule.id}\``);
      expect(design, rule.id).toContain(rule.label);
      expect(design, rule.id).toContain(rule.doc);
    }
  });
});
