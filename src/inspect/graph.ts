/**
 * The statechart as plain data: every state node and every transition, with event, guard
 * and action names. Extracted by walking `machine.root`, so what the inspector page and
 * `steward diagram` draw is the machine itself, never a hand-kept copy.
 *
 * @example
 * const graph = machineGraph(sessionMachine);
 * graph.edges.filter((e) => e.kind === 'always').map((e) => e.label);
 */
import type { AnyStateMachine } from 'xstate';
import { guardLabel } from '../core/machines/rules.js';

export type GraphNodeType = 'atomic' | 'compound' | 'parallel' | 'final' | 'history';

export interface GraphNode {
  /** XState's state node id, e.g. "session.waiting_user.intake" (unique in the machine). */
  id: string;
  /** Dotted path below the root, as `SessionView.state` spells it ("waiting_user.intake"); "" for the root. */
  path: string;
  key: string;
  /** The parent node's id; null for the root. */
  parent: string | null;
  type: GraphNodeType;
  /** The id of the initial child of a compound node. */
  initial?: string;
  /** Invoked actors' `src` names. */
  invokes: string[];
  entry: string[];
  exit: string[];
  /** Direct children's ids, in declaration order. */
  children: string[];
}

export type GraphEdgeKind = 'event' | 'always' | 'done' | 'error' | 'wildcard';

export interface GraphEdge {
  /** Stable within one machine: `${source}:${index}`. */
  id: string;
  source: string;
  /** The target node's id; equal to `source` for a targetless transition (drawn as a self-loop). */
  target: string;
  /** False for a targetless transition: actions run, the state is not left. */
  hasTarget: boolean;
  /** The event type as XState sees it ("user_submitted_input", "xstate.done.actor.managerTurn", "*"); "always" for eventless transitions. */
  event: string;
  kind: GraphEdgeKind;
  /** The guard's name, e.g. "hasRequest" or "breaksRule(actor=manager, rule=actorMayUseTool)". */
  guard?: string;
  /** The guard in words, from the rule table (rules.ts), e.g. "manager breaks rule 1: actor may use the tool". */
  guardLabel?: string;
  actions: string[];
  /** "event [guard]" — the label every drawing uses. */
  label: string;
  /** Position among the transitions of its source for this event (XState tries them in this order). */
  order: number;
}

export interface MachineGraph {
  /** The machine's id (also the root node's id). */
  id: string;
  nodes: GraphNode[];
  edges: GraphEdge[];
}

interface TransitionLike {
  target?: ReadonlyArray<{ id: string }>;
  guard?: unknown;
  actions?: ReadonlyArray<unknown>;
  eventType: string;
}

interface StateNodeLike {
  id: string;
  key: string;
  path: string[];
  type: GraphNodeType;
  parent?: StateNodeLike;
  states: Record<string, StateNodeLike>;
  transitions: Map<string, TransitionLike[]>;
  always?: TransitionLike[];
  initial?: { target: ReadonlyArray<{ id: string }> };
  invoke: ReadonlyArray<{ src: unknown; id: string }>;
  entry: ReadonlyArray<unknown>;
  exit: ReadonlyArray<unknown>;
}

function paramsText(params: unknown): string {
  if (params === undefined || params === null) return '';
  if (typeof params !== 'object') return `(${String(params)})`;
  const entries = Object.entries(params as Record<string, unknown>);
  if (entries.length === 0) return '';
  return `(${entries.map(([k, v]) => `${k}=${typeof v === 'object' ? JSON.stringify(v) : String(v)}`).join(', ')})`;
}

/**
 * A guard's name as the tools should show it. Named guards are strings or `{ type, params }`;
 * higher-order guards (`not`, `and`, `or`) are functions carrying `.guards`; an inline
 * function guard shows its function name (or "inline").
 */
export function guardName(guard: unknown): string | undefined {
  if (guard === undefined || guard === null) return undefined;
  if (typeof guard === 'string') return guard;
  if (typeof guard === 'function') {
    const inner = (guard as { guards?: unknown[] }).guards;
    const name = (guard as { name?: string }).name || 'inline';
    if (Array.isArray(inner)) return `${name}(${inner.map((g) => guardName(g) ?? '?').join(', ')})`;
    return name;
  }
  if (typeof guard === 'object' && typeof (guard as { type?: unknown }).type === 'string') {
    const g = guard as { type: string; params?: unknown };
    return `${g.type}${typeof g.params === 'function' ? '(…)' : paramsText(g.params)}`;
  }
  return 'inline';
}

/** The guard in words, for the guards the rule table knows. */
function guardLabelOf(guard: unknown): string | undefined {
  if (typeof guard === 'string') return guardLabel(guard, undefined);
  if (guard && typeof guard === 'object' && typeof (guard as { type?: unknown }).type === 'string') {
    const g = guard as { type: string; params?: unknown };
    return guardLabel(g.type, g.params);
  }
  return undefined;
}

/** An action's name: strings and `{ type }` objects are named; built-ins show their type. */
export function actionName(action: unknown): string {
  if (typeof action === 'string') return action;
  if (typeof action === 'function') {
    const type = (action as { type?: unknown }).type;
    return typeof type === 'string' ? type : (action as { name?: string }).name || 'inline';
  }
  if (action && typeof action === 'object' && typeof (action as { type?: unknown }).type === 'string') {
    return (action as { type: string }).type;
  }
  return 'inline';
}

function edgeKind(event: string): GraphEdgeKind {
  if (event === 'always') return 'always';
  if (event === '*') return 'wildcard';
  if (event.startsWith('xstate.done.')) return 'done';
  if (event.startsWith('xstate.error.')) return 'error';
  return 'event';
}

/** "event [guard]", the label used by the page, Mermaid and DOT. */
export function edgeLabel(event: string, guard: string | undefined): string {
  return guard ? `${event} [${guard}]` : event;
}

/**
 * Walks `machine.root` and returns every state node and transition.
 *
 * @example
 * const { nodes, edges } = machineGraph(sessionMachine);
 * console.log(`${nodes.length} states, ${edges.length} transitions`);
 */
export function machineGraph(machine: AnyStateMachine): MachineGraph {
  const nodes: GraphNode[] = [];
  const edges: GraphEdge[] = [];
  const rootNode: StateNodeLike = machine.root;

  const visit = (node: StateNodeLike): void => {
    const children = Object.values(node.states ?? {});
    nodes.push({
      id: node.id,
      path: node.path.join('.'),
      key: node.key,
      parent: node.parent ? node.parent.id : null,
      type: node.type,
      ...(node.initial?.target?.[0] ? { initial: node.initial.target[0].id } : {}),
      invokes: node.invoke.map((i) => (typeof i.src === 'string' ? i.src : i.id)),
      entry: node.entry.map(actionName),
      exit: node.exit.map(actionName),
      children: children.map((c) => c.id),
    });

    let index = 0;
    const add = (event: string, transitions: readonly TransitionLike[]): void => {
      transitions.forEach((t, order) => {
        const guard = guardName(t.guard);
        const label = guardLabelOf(t.guard);
        const targets = t.target && t.target.length > 0 ? t.target.map((x) => x.id) : [null];
        for (const target of targets) {
          edges.push({
            id: `${node.id}:${index++}`,
            source: node.id,
            target: target ?? node.id,
            hasTarget: target !== null,
            event,
            kind: edgeKind(event),
            ...(guard ? { guard } : {}),
            ...(label ? { guardLabel: label } : {}),
            actions: (t.actions ?? []).map(actionName),
            label: edgeLabel(event, guard),
            order,
          });
        }
      });
    };
    for (const [event, transitions] of node.transitions) add(event, transitions);
    if (node.always) add('always', node.always);
    for (const child of children) visit(child);
  };
  visit(rootNode);
  return { id: machine.id, nodes, edges };
}

/** The node ids that are active for a dotted state ("running.manager.thinking"): the leaf and its ancestors. */
export function activeNodeIds(graph: MachineGraph, state: string): Set<string> {
  const active = new Set<string>();
  const byPath = new Map(graph.nodes.map((n) => [n.path, n]));
  const parts = state ? state.split('.') : [];
  for (let i = 0; i <= parts.length; i++) {
    const node = byPath.get(parts.slice(0, i).join('.'));
    if (node) active.add(node.id);
  }
  return active;
}
