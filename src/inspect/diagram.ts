/**
 * Text diagrams of a statechart: Mermaid (stateDiagram-v2), Graphviz DOT, or the graph as
 * JSON. Every state and every transition is drawn; transitions are labelled
 * `event [guard]`, and a targetless transition (actions only) is drawn as a self-loop.
 *
 * @example
 * import { sessionMachine } from 'steward';
 * writeFileSync('session.mmd', renderDiagram(sessionMachine, 'mermaid'));
 */
import type { AnyStateMachine } from 'xstate';
import { UserError } from '../core/errors.js';
import { machineGraph, type GraphNode, type MachineGraph } from './graph.js';

export type DiagramFormat = 'mermaid' | 'dot' | 'json';
export const diagramFormats: readonly DiagramFormat[] = ['mermaid', 'dot', 'json'];

/** A Mermaid id for a node: its path with dots as double underscores; the root is the machine id. */
export function mermaidId(graph: MachineGraph, node: GraphNode): string {
  return node.parent === null
    ? graph.id.replace(/[^\w]/g, '_')
    : node.path
        .split('.')
        .map((p) => p.replace(/[^\w]/g, '_'))
        .join('__');
}

/** Text that is safe after `:` on a Mermaid line (no line breaks, no `;`, no comment marks). */
function mermaidText(text: string): string {
  return text
    .replace(/[\r\n;]+/g, ' ')
    .replace(/%%/g, '%')
    .replace(/:/g, '∶');
}

function renderMermaid(graph: MachineGraph): string {
  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  const id = (nodeId: string) => mermaidId(graph, byId.get(nodeId)!);
  const lines: string[] = ['stateDiagram-v2'];

  const write = (node: GraphNode, depth: number): void => {
    const pad = '  '.repeat(depth);
    const mid = mermaidId(graph, node);
    if (node.children.length === 0) {
      lines.push(`${pad}state "${node.key}" as ${mid}`);
      if (node.invokes.length) lines.push(`${pad}${mid} : invokes ${node.invokes.join(', ')}`);
      return;
    }
    lines.push(`${pad}state "${node.key}" as ${mid} {`);
    if (node.initial) lines.push(`${pad}  [*] --> ${id(node.initial)}`);
    for (const child of node.children) write(byId.get(child)!, depth + 1);
    lines.push(`${pad}}`);
  };
  write(
    graph.nodes.find((n) => n.parent === null)!,
    1,
  );

  for (const edge of graph.edges) {
    lines.push(`  ${id(edge.source)} --> ${id(edge.target)} : ${mermaidText(edge.label)}`);
  }
  for (const node of graph.nodes) {
    if (node.type === 'final') lines.push(`  ${mermaidId(graph, node)} --> [*]`);
  }
  return `${lines.join('\n')}\n`;
}

const dotString = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

function renderDot(graph: MachineGraph): string {
  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  const lines: string[] = [
    `digraph ${dotString(graph.id)} {`,
    '  compound=true;',
    '  rankdir=TB;',
    '  node [shape=box, style=rounded, fontname="Helvetica"];',
    '  edge [fontname="Helvetica", fontsize=10];',
  ];
  // A compound state is a cluster; edges to or from it attach to its anchor point and clip at the cluster.
  const anchor = (n: GraphNode) => (n.children.length ? `${n.id}#` : n.id);
  const write = (node: GraphNode, depth: number): void => {
    const pad = '  '.repeat(depth);
    if (node.children.length === 0) {
      const shape = node.type === 'final' ? ', peripheries=2' : '';
      const invokes = node.invokes.length ? `\\ninvokes ${node.invokes.join(', ')}` : '';
      lines.push(`${pad}${dotString(node.id)} [label=${dotString(node.key).slice(0, -1)}${invokes}"${shape}];`);
      return;
    }
    lines.push(`${pad}subgraph ${dotString(`cluster_${node.id}`)} {`);
    lines.push(`${pad}  label=${dotString(node.key)}; style=rounded;`);
    lines.push(`${pad}  ${dotString(anchor(node))} [shape=point, width=0.12];`);
    for (const child of node.children) write(byId.get(child)!, depth + 1);
    lines.push(`${pad}}`);
    if (node.initial) lines.push(`${pad}${dotString(anchor(node))} -> ${dotString(anchor(byId.get(node.initial)!))} [style=dashed, arrowhead=vee];`);
  };
  write(
    graph.nodes.find((n) => n.parent === null)!,
    1,
  );
  for (const edge of graph.edges) {
    const source = byId.get(edge.source)!;
    const target = byId.get(edge.target)!;
    const attrs = [`label=${dotString(edge.label)}`];
    if (source.children.length && source !== target) attrs.push(`ltail=${dotString(`cluster_${source.id}`)}`);
    if (target.children.length && source !== target) attrs.push(`lhead=${dotString(`cluster_${target.id}`)}`);
    if (edge.actions.length) attrs.push(`tooltip=${dotString(`${edge.label} / ${edge.actions.join(', ')}`)}`);
    if (!edge.hasTarget) attrs.push('style=dotted');
    lines.push(`  ${dotString(anchor(source))} -> ${dotString(anchor(target))} [${attrs.join(', ')}];`);
  }
  lines.push('}');
  return `${lines.join('\n')}\n`;
}

/**
 * Renders the whole machine: every state, every transition labelled `event [guard]`.
 *
 * @example
 * writeFileSync('chart.mmd', renderDiagram(sessionMachine, 'mermaid')); // or 'dot', 'json'
 */
export function renderDiagram(machine: AnyStateMachine, format: DiagramFormat): string {
  const graph = machineGraph(machine);
  switch (format) {
    case 'mermaid':
      return renderMermaid(graph);
    case 'dot':
      return renderDot(graph);
    case 'json':
      return `${JSON.stringify(graph, null, 2)}\n`;
    default:
      throw new UserError(`Unknown diagram format "${String(format)}". Formats: ${diagramFormats.join(', ')}.`);
  }
}
