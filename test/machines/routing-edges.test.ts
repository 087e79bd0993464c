/**
 * Where a reply leads is written once, in `routing`: a turn's onDone edge only accepts the
 * reply and goes to `checking`, with no guard (nothing on it reads a reply that is not in the
 * context yet); `checking` refuses or settles each call and goes on to `routing` with no
 * guard either, so the routing guards read the settled reply as it is. This test keeps it so.
 */
import { describe, expect, it } from 'vitest';
import { sessionMachine } from '../../src/machine.js';

type Edge = { guard?: unknown; target?: string; reenter?: boolean; actions?: unknown };
type States = Record<string, { invoke?: { onDone?: Edge | Edge[] }; always?: Edge[]; states?: States }>;

const running = (sessionMachine.config.states as unknown as States).running!.states!;

describe('only routing routes a reply', () => {
  for (const agent of ['manager', 'worker'] as const) {
    it(agent, () => {
      const onDone = running[agent]!.states!.thinking!.invoke!.onDone!;
      expect(onDone).toEqual({ target: 'checking', actions: { type: 'acceptReply', params: { actor: agent } } });
      const checking = running[agent]!.states!.checking!.always!;
      // A branch of a fan-out is a worker whose reply the team routes (running.team.routing), unguarded there too.
      const settle = agent === 'manager' ? 'settleCall' : 'settleWorkerCall';
      const toRouting = checking.filter((e) => e.target !== undefined && e.guard === undefined);
      expect(toRouting).toEqual([{ target: 'routing', actions: settle }]);
      const others = checking.filter((e) => e.target !== undefined && e.guard !== undefined);
      expect(others).toEqual(agent === 'manager' ? [] : [{ guard: 'checksBranch', target: '#session.running.team.routing', actions: settle }]);
      const routing = running[agent]!.states!.routing!.always!;
      expect(routing.filter((e) => e.target !== undefined).length).toBeGreaterThan(2);
    });
  }
});
