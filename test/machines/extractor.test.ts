/**
 * The machine as the Stately tools read it: @xstate/machine-extractor (what the Stately VS
 * Code extension and Studio's import use) parses session.machine.ts from source. Every guard
 * it finds must be a named guard the machine implements (no inline `not(...)` code, which the
 * tools show as a blob), with its params, and it must find as many states and transitions as
 * the machine has.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { AnyStateNode } from 'xstate';
import { sessionMachine } from '../../src/core/machines/session.machine.js';
import { loadMachineExtractor } from '../support/machine-extractor.js';

const source = readFileSync(new URL('../../src/core/machines/session.machine.ts', import.meta.url), 'utf8');

interface ExtractedGuard {
  kind: string;
  type: string;
  params?: Record<string, unknown>;
}
interface ExtractedTransition {
  target?: unknown;
  cond?: ExtractedGuard;
}
interface ExtractedNode {
  on?: Record<string, ExtractedTransition | ExtractedTransition[]>;
  always?: ExtractedTransition | ExtractedTransition[];
  invoke?:
    | { onDone?: ExtractedTransition | ExtractedTransition[]; onError?: ExtractedTransition | ExtractedTransition[] }
    | { onDone?: ExtractedTransition; onError?: ExtractedTransition }[];
  states?: Record<string, ExtractedNode>;
}

const list = <T>(x: T | T[] | undefined): T[] => (x === undefined ? [] : Array.isArray(x) ? x : [x]);

function walkExtracted(config: ExtractedNode) {
  let states = 0;
  const transitions: { where: string; guard?: ExtractedGuard }[] = [];
  const visit = (node: ExtractedNode, path: string) => {
    states++;
    const add = (event: string, t: ExtractedTransition | ExtractedTransition[] | undefined) =>
      list(t).forEach((x) => transitions.push({ where: `${path || '(root)'} ${event}`, ...(x.cond ? { guard: x.cond } : {}) }));
    for (const [event, t] of Object.entries(node.on ?? {})) add(event, t);
    add('always', node.always);
    for (const invoke of list(node.invoke)) {
      add('onDone', invoke.onDone);
      add('onError', invoke.onError);
    }
    for (const [key, child] of Object.entries(node.states ?? {})) visit(child, path ? `${path}.${key}` : key);
  };
  visit(config, '');
  return { states, transitions };
}

function walkMachine(root: AnyStateNode) {
  let states = 0;
  let transitions = 0;
  const visit = (node: AnyStateNode) => {
    states++;
    for (const [, list] of node.transitions) transitions += list.length;
    transitions += node.always?.length ?? 0;
    Object.values(node.states).forEach(visit);
  };
  visit(root);
  return { states, transitions };
}

describe('the machine as @xstate/machine-extractor reads it', () => {
  const extracted = loadMachineExtractor().extractMachinesFromFile(source);
  const config = extracted?.machines[0]?.toConfig() as ExtractedNode | null | undefined;

  it('finds the session machine', () => {
    expect(extracted?.machines).toHaveLength(1);
    expect(config).toMatchObject({ id: 'session' });
  });

  it('finds as many states and transitions as the machine has', () => {
    const found = walkExtracted(config!);
    const actual = walkMachine(sessionMachine.root);
    expect({ states: found.states, transitions: found.transitions.length }).toEqual(actual);
    // 18 + the transient states that route a settled reply (manager, worker) and that start a worker's round
    // + approve_tool (a person decides a worker's MCP tool calls) + running.worker.calling (an approved call runs)
    // + tool_input (the server asks a person) + tool_interrupted (a call cut off by a stopped process)
    // + the manager's starting (a held branch of a fan-out goes first) + running.team and its five (starting, working, routing, joining, resuming).
    expect(actual.states).toBe(32);
    // 44 + the token budget's two edges (manager, worker) + package_upgraded (steward upgrade)
    // + a refusal edge first on each of the 15 user-event transitions of the waiting states (a decision for a closed wait)
    // + checking → routing (manager, worker) + the worker's round starting
    // + approve_tool's six (a closed wait, the last decision, another decision; for approve and reject)
    // + the worker's routing to approve_tool and to calling + calling's three (changed tool, result, failure)
    // + calling's two to the new waits (input asked, interrupted) + tool_input's two (a closed wait, the answers)
    // + tool_interrupted's six (a closed wait, the call named; for run again, skip, result given)
    // + a fan-out: the manager's refusal edge workersIndependent and routing's two (items wait, or they start),
    //   approve_step's five (the last item and another, for approve and reject; the items expire), review_artifact's
    //   five (the same for accept and reject, and their expiry), the manager's starting four (a held branch first; else
    //   within the burst and the token budget, as after any round), worker checking's edge to the team's routing, and
    //   the team's 16 (starting 1, working 2, routing 7, joining 4, resuming 2).
    expect(actual.transitions).toBe(136);
  });

  it('every guard is a named guard of the machine, shown with its params', () => {
    const guarded = walkExtracted(config!).transitions.filter((t) => t.guard);
    const implemented = Object.keys(sessionMachine.implementations.guards);
    expect(guarded.length).toBeGreaterThan(20);
    for (const { where, guard } of guarded) {
      expect(guard!.kind, `${where}: ${guard!.type}`).toBe('named');
      expect(implemented, where).toContain(guard!.type);
    }
    // The ten refusal edges of `checking` (six manager, four worker) can be told apart by their params.
    const refusals = guarded.filter((t) => t.guard!.type === 'breaksRule').map((t) => `${String(t.guard!.params?.actor)}:${String(t.guard!.params?.rule)}`);
    expect(refusals).toHaveLength(10);
    expect(new Set(refusals).size).toBe(10);
  });
});
