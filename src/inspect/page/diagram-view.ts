/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * The statechart drawing: ELK layout → SVG. Every state (compound states as boxes holding
 * their children), every transition with its "event [guard]" label; the active state and
 * its ancestors are highlighted, and so are the transitions that leave them. How it is
 * scaled and scrolled (fit, find active, following a step) is diagram-viewport.ts.
 */
import ElkApi from 'elkjs/lib/elk-api.js';
import elkWorkerUrl from 'elkjs/lib/elk-worker.min.js?url';
import { activeNodeIds, type MachineGraph } from '../graph.js';
import { h, s } from './dom.js';
import { DiagramViewport, type Box } from './diagram-viewport.js';
import { api } from './api.js';
import { elkGraph, internalText, layoutFrom, LINE, placementOf, type Layout, type Measure, type Point } from './layout.js';
import { layoutKey } from './layout-key.js';
import type { Placement } from '../placement.js';

const FONTS = {
  state: '600 13px system-ui, -apple-system, "Segoe UI", sans-serif',
  label: '11px ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace',
  small: '10px ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace',
} as const;

function canvasMeasure(): Measure {
  const ctx = document.createElement('canvas').getContext('2d')!;
  return (text, font) => {
    ctx.font = FONTS[font];
    return ctx.measureText(text).width;
  };
}

function pathOf(points: Point[]): string {
  return points.map((p, i) => `${i ? 'L' : 'M'}${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(' ');
}

export class DiagramView {
  private layout: Layout | null = null;
  private svg: SVGSVGElement | null = null;
  private viewport: DiagramViewport | null = null;
  /** The active leaf's node id, to follow it when a step moves it. */
  private activeLeaf: string | null = null;
  /** Whether the first active state placed the view (whole chart or readable around it). */
  private placed = false;
  readonly ready: Promise<void>;

  constructor(
    private readonly host: HTMLElement,
    private readonly graph: MachineGraph,
    /** Whether the inspector keeps laid-out charts (Info.keepsLayouts): then a chart laid out once is drawn from it. */
    private readonly keepsLayouts: boolean,
  ) {
    this.ready = this.draw();
    window.addEventListener('resize', () => {
      if (this.viewport?.mode === 'whole') this.fit();
      else if (this.viewport?.mode === 'readable') this.viewport.readable(this.activeBox());
    });
  }

  /**
   * The chart's layout: the one the inspector kept for exactly this input (the chart and this
   * browser's measured text), or ELK's. ELK costs a page seconds of CPU (its megabytes of code
   * made ready, then the layout), every load anew; a kept layout skips loading it at all.
   */
  private async layOut(): Promise<Layout> {
    const input = elkGraph(this.graph, canvasMeasure());
    // The worker's path names its build (Vite puts a hash of its content in it); the URL's origin is this inspector's own.
    const key = this.keepsLayouts ? await layoutKey(input, new URL(elkWorkerUrl, location.href).pathname) : null;
    const kept = key ? await api.keptLayout(key).catch(() => null) : null;
    if (kept) {
      try {
        return layoutFrom(this.graph, kept);
      } catch {
        // Kept for another chart under this key: laid out again below, and kept anew.
      }
    }
    // ELK runs in a Web Worker (its script is bundled with the page): the page stays responsive
    // and shows the session while the statechart is laid out. elkjs is CommonJS: the class is
    // both module.exports and its .default.
    const elk = new ElkApi.default({ workerUrl: elkWorkerUrl });
    let placement: Placement;
    try {
      placement = placementOf(await elk.layout(input));
    } finally {
      elk.terminateWorker();
    }
    // Kept for the next page load; a failure only means the next one lays out again.
    if (key) api.keepLayout(key, placement).catch(() => {});
    return layoutFrom(this.graph, placement);
  }

  private async draw(): Promise<void> {
    const started = performance.now();
    this.layout = await this.layOut();
    const { width, height } = this.layout;
    const svg = s('svg', {
      id: 'diagram-svg',
      xmlns: 'http://www.w3.org/2000/svg',
      viewBox: `0 0 ${Math.ceil(width)} ${Math.ceil(height)}`,
      role: 'img',
      'aria-label': `Statechart of ${this.graph.id}`,
      'data-layout-ms': String(Math.round(performance.now() - started)),
    });
    svg.append(
      s(
        'defs',
        null,
        s(
          'marker',
          { id: 'arrow', viewBox: '0 0 10 10', refX: '9', refY: '5', markerWidth: '7', markerHeight: '7', orient: 'auto-start-reverse' },
          s('path', { d: 'M0,0 L10,5 L0,10 z', class: 'arrowhead' }),
        ),
        s(
          'marker',
          { id: 'arrow-hot', viewBox: '0 0 10 10', refX: '9', refY: '5', markerWidth: '7', markerHeight: '7', orient: 'auto-start-reverse' },
          s('path', { d: 'M0,0 L10,5 L0,10 z', class: 'arrowhead hot' }),
        ),
      ),
    );

    const nodesLayer = s('g', { class: 'nodes' });
    for (const laid of this.layout.nodes) {
      const { node } = laid;
      const g = s('g', {
        class: `state ${laid.compound ? 'compound' : 'leaf'} ${node.type}`,
        'data-id': node.id,
        'data-path': node.path,
      });
      g.append(s('title', null, node.path || node.id));
      g.append(s('rect', { x: laid.x, y: laid.y, width: laid.width, height: laid.height, rx: laid.compound ? 10 : 8 }));
      if (node.type === 'final') {
        g.append(s('rect', { class: 'final-ring', x: laid.x + 3, y: laid.y + 3, width: laid.width - 6, height: laid.height - 6, rx: 6 }));
      }
      let lineY: number;
      if (laid.compound) {
        g.append(s('text', { class: 'state-name', x: laid.x + 12, y: laid.y + 18 }, node.key));
        lineY = laid.y + 18 + LINE;
      } else {
        const cx = laid.x + laid.width / 2;
        const plain = node.invokes.length === 0 && laid.internal.length === 0;
        const top = laid.y + (plain ? laid.height / 2 + 4.5 : 18);
        g.append(s('text', { class: 'state-name', x: cx, y: top, 'text-anchor': 'middle' }, node.key));
        node.invokes.forEach((src, i) => g.append(s('text', { class: 'invoke', x: cx, y: top + 15 + i * LINE, 'text-anchor': 'middle' }, `invoke ${src}`)));
        lineY = top + 15 + node.invokes.length * LINE + (laid.internal.length ? 4 : 0);
        if (laid.internal.length) g.append(s('line', { class: 'compartment', x1: laid.x, x2: laid.x + laid.width, y1: lineY - 12, y2: lineY - 12 }));
      }
      laid.internal.forEach((edge, i) => {
        // Internal (targetless) transitions: listed inside the state, "event [guard] / actions".
        g.append(
          s(
            'text',
            {
              class: `transition internal kind-${edge.kind}`,
              'data-edge-id': edge.id,
              'data-source': edge.source,
              'data-target': edge.target,
              'data-event': edge.event,
              x: laid.x + 8,
              y: lineY + i * LINE,
            },
            s('title', null, `${edge.label} / ${edge.actions.join(', ')} (stays in ${node.path || node.id})`),
            internalText(edge),
          ),
        );
      });
      nodesLayer.append(g);
    }
    for (const dot of this.layout.initials) {
      nodesLayer.append(s('circle', { class: 'initial', cx: dot.x, cy: dot.y, r: dot.r, 'data-initial-of': dot.of }));
    }

    const edgesLayer = s('g', { class: 'edges' });
    const labelsLayer = s('g', { class: 'labels' });
    for (const laid of this.layout.edges) {
      const e = laid.edge;
      if ('initial' in e) {
        edgesLayer.append(s('path', { class: 'transition initial-edge', d: pathOf(laid.points), 'marker-end': 'url(#arrow)' }));
        continue;
      }
      const g = s('g', {
        class: `transition kind-${e.kind}${e.hasTarget ? '' : ' targetless'}`,
        'data-edge-id': e.id,
        'data-source': e.source,
        'data-target': e.target,
        'data-event': e.event,
      });
      g.append(
        s(
          'title',
          null,
          `${e.label}${e.guardLabel ? ` — ${e.guardLabel}` : ''}${e.actions.length ? ` / ${e.actions.join(', ')}` : ''}${e.hasTarget ? '' : ' (stays)'}`,
        ),
      );
      g.append(s('path', { d: pathOf(laid.points), 'marker-end': 'url(#arrow)' }));
      edgesLayer.append(g);
      if (laid.label) {
        const { x, y, width, height, text } = laid.label;
        const lines = text.split('\n');
        labelsLayer.append(
          s(
            'g',
            { class: `edge-label kind-${e.kind}`, 'data-edge-id': e.id, 'data-source': e.source },
            s('title', null, `${e.label}${e.guardLabel ? ` — ${e.guardLabel}` : ''}${e.actions.length ? ` / ${e.actions.join(', ')}` : ''}`),
            s('rect', { x, y, width, height, rx: 3 }),
            lines.map((line, i) => s('text', { class: i ? 'guard' : 'event', x: x + width / 2, y: y + 11 + i * LINE, 'text-anchor': 'middle' }, line)),
          ),
        );
      }
    }
    svg.append(nodesLayer, edgesLayer, labelsLayer);
    this.svg = svg;
    const scroller = h('div', { class: 'diagram-scroll' }, svg);
    this.host.replaceChildren(
      h(
        'div',
        { class: 'diagram-tools' },
        h('button', { type: 'button', title: 'Zoom out', onclick: () => this.viewport?.zoom(1 / 1.25) }, '−'),
        h('button', { type: 'button', title: 'The whole chart (its text is small: zoom in, or find active, to read it)', onclick: () => this.fit() }, 'fit'),
        h('button', { type: 'button', title: 'Zoom in', onclick: () => this.viewport?.zoom(1.25) }, '+'),
        h('button', { type: 'button', title: 'Zoom in on the active state', onclick: () => this.reveal() }, 'find active'),
      ),
      scroller,
    );
    // Font sizes come from the style sheet: read them once the drawing is in the page.
    const smallest = Math.min(...[...svg.querySelectorAll('text')].map((t) => parseFloat(getComputedStyle(t).fontSize)).filter((px) => px > 0));
    this.viewport = new DiagramViewport(scroller, svg, this.layout, Number.isFinite(smallest) ? smallest : 10);
    this.viewport.readable(null);
  }

  /** The active leaf's box in layout coordinates. */
  private activeBox(): Box | null {
    return this.layout?.nodes.find((laid) => laid.node.id === this.activeLeaf) ?? null;
  }

  /** The whole chart in the box. */
  fit(): void {
    this.viewport?.fit();
  }

  /** Zooms in on the active leaf. */
  reveal(): void {
    const box = this.activeBox();
    if (box) this.viewport?.focus(box);
  }

  /** Highlights `state` (dotted path); `past` marks a time-travel view. A new active state is scrolled into view. */
  setActive(state: string | null, mode: 'live' | 'past' = 'live'): void {
    if (!this.svg) return;
    const active = state === null ? new Set<string>() : activeNodeIds(this.graph, state);
    const leaf = state === null ? null : (this.graph.nodes.find((n) => n.path === state)?.id ?? null);
    this.svg.classList.toggle('time-travel', mode === 'past');
    this.svg.dataset.active = state ?? '';
    for (const g of this.svg.querySelectorAll<SVGGElement>('.state')) {
      const id = g.dataset.id!;
      g.classList.toggle('active', active.has(id));
      g.classList.toggle('active-leaf', id === leaf);
    }
    for (const g of this.svg.querySelectorAll<SVGElement>('[data-edge-id]')) {
      const source = g.dataset.source;
      const hot = !!source && active.has(source);
      g.classList.toggle('hot', hot);
      g.querySelector('path')?.setAttribute('marker-end', hot ? 'url(#arrow-hot)' : 'url(#arrow)');
    }
    const moved = leaf !== this.activeLeaf;
    this.activeLeaf = leaf;
    const box = this.activeBox();
    if (!this.placed && box && this.viewport) {
      // The first state shown places the view: a finished session's final state alone says
      // nothing, so it opens on the whole chart; any other, readable around it.
      this.placed = true;
      if (this.graph.nodes.find((n) => n.id === leaf)?.type === 'final') this.viewport.fit();
      else this.viewport.readable(box);
    } else if (moved && box) this.viewport?.keepInView(box);
  }
}
