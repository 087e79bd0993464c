/**
 * Where a reply leads is written twice in the chart, on purpose: on a turn's onDone edges
 * (the reply's first call, checked and settled in one microstep) and on `checking` (the calls
 * after the first). This test is what keeps the two lists one fact: the same guards, in the
 * same order, to the same targets, with the same actions once the settle is set aside.
 */
import { describe, expect, it } from 'vitest';
import { sessionMachine } from '../../src/machine.js';

type Edge = { guard?: string | { type: string }; target?: string; reenter?: boolean; actions?: unknown };
type States = Record<string, { invoke?: { onDone?: Edge[] }; always?: Edge[]; states?: States }>;

const running = (sessionMachine.config.states as unknown as States).running!.states!;
const SETTLE = new Set(['settleCall', 'settleWorkerCall', 'acceptAndSettleFirstCall', 'acceptWorkerReply']);

/** An edge as a comparable line: guard, target (checking's own state named as onDone names it), the other actions. */
function route(edge: Edge): string {
  const guard = typeof edge.guard === 'string' ? edge.guard : edge.guard?.type ?? '(else)';
  const actions = ([] as unknown[]).concat(edge.actions ?? []).map((a) => (typeof a === 'string' ? a : (a as { type: string }).type)).filter((a) => !SETTLE.has(a));
  return `${guard} → ${edge.target ?? 'checking'} [${actions.join(', ')}]`;
}

const routing = (edges: Edge[]) => edges.filter((e) => (typeof e.guard === 'object' ? e.guard.type : e.guard) !== 'breaksRule').map(route);

describe('the routing of a reply: onDone and checking say the same', () => {
  for (const agent of ['manager', 'worker'] as const) {
    it(agent, () => {
      const onDone = routing(running[agent]!.states!.thinking!.invoke!.onDone!);
      const checking = routing(running[agent]!.states!.checking!.always!);
      expect(onDone.length).toBeGreaterThan(2);
      expect(onDone).toEqual(checking);
    });
  }
});
