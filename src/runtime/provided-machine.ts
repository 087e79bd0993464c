/**
 * `createRuntime({ machine })`: an app's `sessionMachine.provide(...)` — guards, actions or
 * actors of its own — runs every session of the runtime (store, journal, replay, fork, serve,
 * the inspector). What `provide()` cannot change is the shape the rest of Steward reads:
 * the states and the events each takes. A machine of another shape is refused at start, with
 * what differs, instead of failing on the first snapshot it cannot resolve.
 */
import type { AnyStateMachine, AnyStateNode } from 'xstate';
import { MachineMismatchError, UserError } from '../core/errors.js';
import { sessionMachine, type SessionMachine } from '../core/machines/session.machine.js';

/** Every state node of the chart by id, with the events it declares (sorted). */
function shapeOf(machine: AnyStateMachine): Map<string, string[]> {
  const shape = new Map<string, string[]>();
  const visit = (node: AnyStateNode) => {
    shape.set(node.id, [...node.ownEvents].sort());
    for (const child of Object.values(node.states)) visit(child);
  };
  visit(machine.root);
  return shape;
}

const isMachine = (value: unknown): value is AnyStateMachine =>
  typeof value === 'object' && value !== null && typeof (value as { provide?: unknown }).provide === 'function' && 'root' in value;

/**
 * The machine an app passed, checked against Steward's chart: same states, each taking the same events.
 *
 * @example
 * const machine = checkedMachine(sessionMachine.provide({ guards: { stepNeedsApproval: () => true } }));
 */
export function checkedMachine(machine: unknown): SessionMachine {
  if (!isMachine(machine))
    throw new UserError(
      'createRuntime({ machine }) needs a state machine made with sessionMachine.provide({ guards, actions, actors }) (from steward/machine).',
    );
  const expected = shapeOf(sessionMachine);
  const actual = shapeOf(machine);
  const missingStates = [...expected.keys()].filter((id) => !actual.has(id));
  const extraStates = [...actual.keys()].filter((id) => !expected.has(id));
  const changedEvents = [...expected]
    .filter(([id, events]) => actual.has(id) && actual.get(id)!.join(' ') !== events.join(' '))
    .map(([state, events]) => ({ state, expected: events, actual: actual.get(state)! }));
  if (missingStates.length || extraStates.length || changedEvents.length) {
    const parts = [
      ...(missingStates.length ? [`it lacks ${missingStates.join(', ')}`] : []),
      ...(extraStates.length ? [`it adds ${extraStates.join(', ')}`] : []),
      ...changedEvents.map((c) => `${c.state} takes ${c.actual.join(', ') || 'no events'} instead of ${c.expected.join(', ') || 'none'}`),
    ];
    throw new MachineMismatchError(
      `createRuntime({ machine }): the machine is not Steward's chart (${parts.join('; ')}). ` +
        'Make it with sessionMachine.provide({ guards, actions, actors }): provide() swaps implementations and keeps the states and events the store, the journal and the view read.',
      missingStates,
      extraStates,
      changedEvents,
    );
  }
  return machine as unknown as SessionMachine;
}

/** Whether the machine brings its own actor under `name` (else the runtime provides its turn, or its tool calls). */
export function providesActor(machine: SessionMachine, name: 'managerTurn' | 'workerTurn' | 'toolCall'): boolean {
  return machine.implementations.actors[name] !== sessionMachine.implementations.actors[name];
}
