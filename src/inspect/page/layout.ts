/**
 * Lays out the statechart with ELK (layered, hierarchical): compound states contain their
 * children, every transition is an edge with its "event [guard]" label, and each compound
 * state gets an initial-state dot. Coordinates come back absolute (ELK's ROOT coordinates).
 * No DOM here: text is measured by the caller, and the caller runs ELK on `elkGraph`'s input
 * (the page in a Web Worker, or not at all when the inspector kept the layout: diagram-view.ts),
 * then draws from `placementOf` its answer through `layoutFrom`. This also runs in Node.
 */
import type { ElkExtendedEdge, ElkNode } from 'elkjs/lib/elk-api.js';
import type { GraphEdge, GraphNode, MachineGraph } from '../graph.js';
import type { Placement } from '../placement.js';

export interface Point {
  x: number;
  y: number;
}

export interface LaidNode {
  node: GraphNode;
  x: number;
  y: number;
  width: number;
  height: number;
  compound: boolean;
  /** Targetless transitions (actions only), listed inside the state as UML draws internal transitions. */
  internal: GraphEdge[];
}

export interface LaidEdge {
  edge: GraphEdge | { id: string; source: string; target: string; initial: true };
  points: Point[];
  label?: { text: string; x: number; y: number; width: number; height: number };
}

export interface Layout {
  width: number;
  height: number;
  nodes: LaidNode[];
  /** Initial-state dots, one per compound state with an initial child. */
  initials: { of: string; x: number; y: number; r: number }[];
  edges: LaidEdge[];
}

export type Measure = (text: string, font: 'state' | 'label' | 'small') => number;

export const LINE = 14;
const LEAF_HEIGHT = 32;
const TITLE = 24;
const DOT = 10;

/** An edge label's lines: the event, then the guard on its own line. */
export function labelLines(edge: GraphEdge): string[] {
  return edge.guard ? [edge.event, `[${edge.guard}]`] : [edge.event];
}

/** An internal transition's text: "event [guard] / actions". */
export function internalText(edge: GraphEdge): string {
  return `${edge.label}${edge.actions.length ? ` / ${edge.actions.join(', ')}` : ''}`;
}

const initialId = (id: string) => `${id}#initial`;

export interface LayoutOptions {
  direction?: 'DOWN' | 'RIGHT';
  extra?: Record<string, string>;
  label?: Record<string, string>;
}

/** Each state's targetless transitions (drawn inside it), by state id. */
function internalEdges(graph: MachineGraph): Map<string, GraphEdge[]> {
  const internal = new Map<string, GraphEdge[]>();
  for (const edge of graph.edges) {
    if (!edge.hasTarget) internal.set(edge.source, [...(internal.get(edge.source) ?? []), edge]);
  }
  return internal;
}

/**
 * What ELK is asked to lay out: every state sized by its measured text, every transition with
 * its label. A function of the chart, the text's widths and the options only, so the same
 * input always gives the same drawing (a kept layout's key is made from it: layout-key.ts).
 */
export function elkGraph(graph: MachineGraph, measure: Measure, options: LayoutOptions = {}): ElkNode {
  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  const root = graph.nodes.find((n) => n.parent === null)!;
  const internal = internalEdges(graph);
  const internalWidth = (id: string) => Math.max(0, ...(internal.get(id) ?? []).map((e) => measure(internalText(e), 'small')));
  const internalLines = (id: string) => (internal.get(id) ?? []).length;

  // With INCLUDE_CHILDREN each compound state is its own graph for ELK: the options go on every one.
  const shared: Record<string, string> = {
    'elk.algorithm': 'layered',
    'elk.direction': options.direction ?? 'DOWN',
    'elk.edgeRouting': 'ORTHOGONAL',
    'elk.layered.spacing.nodeNodeBetweenLayers': '34',
    'elk.spacing.nodeNode': '26',
    'elk.spacing.edgeNode': '14',
    'elk.spacing.edgeEdge': '8',
    'elk.spacing.edgeLabel': '3',
    'elk.layered.spacing.edgeNodeBetweenLayers': '14',
    'elk.layered.spacing.edgeEdgeBetweenLayers': '8',
    'elk.layered.nodePlacement.strategy': 'NETWORK_SIMPLEX',
    ...options.extra,
  };

  const toElk = (node: GraphNode): ElkNode => {
    const extra = internalLines(node.id);
    if (node.children.length === 0) {
      const lines = [measure(node.key, 'state'), ...node.invokes.map((i) => measure(`invoke ${i}`, 'small')), internalWidth(node.id)];
      return {
        id: node.id,
        width: Math.max(84, Math.ceil(Math.max(...lines)) + 24),
        height: LEAF_HEIGHT + (node.invokes.length + extra) * LINE + (extra ? 6 : 0),
      };
    }
    const children = node.children.map((c) => toElk(byId.get(c)!));
    if (node.initial) children.unshift({ id: initialId(node.id), width: DOT, height: DOT });
    const top = TITLE + 10 + extra * LINE;
    return {
      id: node.id,
      children,
      layoutOptions: {
        ...shared,
        'elk.padding': `[top=${top},left=14,bottom=14,right=14]`,
        'elk.nodeSize.minimum': `(${Math.ceil(Math.max(measure(node.key, 'state'), internalWidth(node.id))) + 40}, 60)`,
        'elk.nodeSize.constraints': 'MINIMUM_SIZE',
      },
    };
  };

  const edges: ElkExtendedEdge[] = [];
  for (const node of graph.nodes) {
    if (node.initial) edges.push({ id: `${node.id}#initial-edge`, sources: [initialId(node.id)], targets: [node.initial] });
  }
  for (const edge of graph.edges) {
    if (!edge.hasTarget) continue;
    const lines = labelLines(edge);
    edges.push({
      id: edge.id,
      sources: [edge.source],
      targets: [edge.target],
      // Labels sit at the edge's tail, beside the state they leave: centred labels would
      // each take a slot in the layer between waiting_user and running (a far wider drawing).
      labels: [
        {
          text: lines.join('\n'),
          width: Math.ceil(Math.max(...lines.map((l) => measure(l, 'label')))) + 8,
          height: LINE * lines.length + 2,
          layoutOptions: { 'elk.edgeLabels.placement': 'TAIL', ...options.label },
        },
      ],
    });
  }

  return {
    id: '#diagram',
    layoutOptions: {
      ...shared,
      'elk.hierarchyHandling': 'INCLUDE_CHILDREN',
      'elk.json.edgeCoords': 'ROOT',
      'elk.json.shapeCoords': 'ROOT',
      'elk.padding': '[top=8,left=8,bottom=8,right=8]',
    },
    children: [toElk(root)],
    edges,
  };
}

/** Where ELK put each part of the chart (its answer to `elkGraph`), flat and in absolute coordinates. */
export function placementOf(laid: ElkNode): Placement {
  const boxes: Placement['boxes'] = [];
  const edges: Placement['edges'] = [];
  const walk = (n: ElkNode): void => {
    for (const e of (n.edges ?? []) as ElkExtendedEdge[]) {
      const points: Point[] = [];
      for (const s of e.sections ?? []) {
        if (points.length === 0) points.push(s.startPoint);
        points.push(...(s.bendPoints ?? []), s.endPoint);
      }
      const label = e.labels?.[0];
      edges.push({
        id: e.id,
        source: e.sources[0]!,
        target: e.targets[0]!,
        points: points.map(({ x, y }) => ({ x, y })),
        ...(label?.text ? { label: { text: label.text, x: label.x ?? 0, y: label.y ?? 0, width: label.width ?? 0, height: label.height ?? 0 } } : {}),
      });
    }
    for (const c of n.children ?? []) {
      boxes.push({ id: c.id, x: c.x ?? 0, y: c.y ?? 0, width: c.width ?? 0, height: c.height ?? 0 });
      walk(c);
    }
  };
  walk(laid);
  return { width: laid.width ?? 0, height: laid.height ?? 0, boxes, edges };
}

/**
 * The drawing's layout: each placed box and edge with its part of `graph`. Throws unless the
 * placement places each of the chart's states once and no other (a layout kept for another chart).
 */
export function layoutFrom(graph: MachineGraph, placement: Placement): Layout {
  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  const internal = internalEdges(graph);
  const nodes: LaidNode[] = [];
  const initials: Layout['initials'] = [];
  const placed = new Set<string>();
  for (const box of placement.boxes) {
    if (box.id.endsWith('#initial')) {
      initials.push({ of: box.id.slice(0, -'#initial'.length), x: box.x + DOT / 2, y: box.y + DOT / 2, r: DOT / 2 });
      continue;
    }
    const node = byId.get(box.id);
    if (!node || placed.has(box.id)) throw new Error(`The layout places a state "${box.id}" the chart does not have, or places it twice.`);
    placed.add(box.id);
    nodes.push({ node, x: box.x, y: box.y, width: box.width, height: box.height, compound: node.children.length > 0, internal: internal.get(node.id) ?? [] });
  }
  if (nodes.length !== graph.nodes.length) throw new Error(`The layout places ${nodes.length} of the chart's ${graph.nodes.length} states.`);
  const edgeById = new Map(graph.edges.map((e) => [e.id, e]));
  const edges: LaidEdge[] = placement.edges.map((e) => ({
    edge: edgeById.get(e.id) ?? { id: e.id, source: e.source, target: e.target, initial: true },
    points: e.points,
    ...(e.label ? { label: e.label } : {}),
  }));
  return { width: placement.width, height: placement.height, nodes, initials, edges };
}
