import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sessionMachine } from '../../src/core/machines/session.machine.js';
import { loadMachine, loadStatelyConfig } from '../../src/inspect/config.js';
import { renderDiagram } from '../../src/inspect/diagram.js';
import { machineGraph } from '../../src/inspect/graph.js';

/** Every transition of the machine, found by walking the state nodes here (not with graph.ts). */
function transitionsOf(machine: typeof sessionMachine) {
  const out: { source: string; target: string; event: string; guard?: string }[] = [];
  const guardText = (g: unknown): string | undefined => {
    if (g === undefined) return undefined;
    if (typeof g === 'string') return g;
    if (typeof g === 'function') return `${g.name}(${(g as unknown as { guards: unknown[] }).guards.map(guardText).join(', ')})`;
    const { type, params } = g as { type: string; params?: Record<string, unknown> };
    return params
      ? `${type}(${Object.entries(params)
          .map(([k, v]) => `${k}=${String(v)}`)
          .join(', ')})`
      : type;
  };
  const walk = (node: typeof sessionMachine.root) => {
    const add = (event: string, list: readonly { target?: readonly { id: string }[]; guard?: unknown }[]) => {
      for (const t of list) out.push({ source: node.id, target: t.target?.[0]?.id ?? node.id, event, ...(t.guard ? { guard: guardText(t.guard) } : {}) });
    };
    for (const [event, list] of node.transitions) add(event, list);
    if (node.always) add('always', node.always);
    for (const child of Object.values(node.states)) walk(child);
  };
  walk(machine.root);
  return out;
}

const mermaidId = (id: string) =>
  id === 'session'
    ? 'session'
    : id
        .replace(/^session\./, '')
        .split('.')
        .join('__');

describe('diagrams of the session machine', () => {
  const transitions = transitionsOf(sessionMachine);

  it("the graph has every state and every transition, with guard names and params, and the rule table's labels", () => {
    const graph = machineGraph(sessionMachine);
    expect(graph.nodes.map((n) => n.path)).toContain('running.manager.checking');
    const count = (node: typeof sessionMachine.root): number => 1 + Object.values(node.states).reduce((n, c) => n + count(c), 0);
    expect(graph.nodes).toHaveLength(count(sessionMachine.root));
    expect(graph.edges).toHaveLength(transitions.length);
    expect(graph.edges.map((e) => e.label)).toContain('always [burstUsedUp]');
    expect(graph.edges.map((e) => e.label)).toContain('always [breaksRule(actor=manager, rule=actorMayUseTool)]');
    expect(graph.edges.find((e) => e.guard === 'breaksRule(actor=worker, rule=tagsWithinOutputTags)')?.guardLabel).toBe(
      'worker breaks rule 4: tags within the output tags',
    );
    expect(graph.edges.filter((e) => e.guard?.startsWith('not('))).toEqual([]);
    expect(graph.edges.find((e) => e.event === '*')).toMatchObject({ source: 'session', kind: 'wildcard', actions: ['recordRejection'], hasTarget: false });
  });

  it('the Mermaid output contains every transition of the machine, labelled "event [guard]"', () => {
    const mermaid = renderDiagram(sessionMachine, 'mermaid');
    expect(mermaid.startsWith('stateDiagram-v2\n')).toBe(true);
    const lines = new Set(mermaid.split('\n').map((l) => l.trim()));
    expect(transitions.length).toBeGreaterThan(40);
    for (const t of transitions) {
      const label = t.guard ? `${t.event} [${t.guard}]` : t.event;
      expect(lines, `missing ${t.source} --> ${t.target} : ${label}`).toContain(`${mermaidId(t.source)} --> ${mermaidId(t.target)} : ${label}`);
    }
    // …and every state, as a state or a composite state.
    for (const node of machineGraph(sessionMachine).nodes) {
      expect(mermaid).toMatch(new RegExp(`state "${node.key}" as ${mermaidId(node.id)}( \\{)?\\n`));
    }
  });

  it('DOT and JSON carry the same transitions', () => {
    const dot = renderDiagram(sessionMachine, 'dot');
    expect(dot.startsWith('digraph "session" {')).toBe(true);
    expect(dot.match(/ -> /g)?.length).toBe(transitions.length + 6); // + one initial arrow per compound state (session, waiting_user, running, manager, worker, team)
    expect(dot).toContain('label="user_confirmed_intake [hasRequest]"');
    const json = JSON.parse(renderDiagram(sessionMachine, 'json')) as ReturnType<typeof machineGraph>;
    expect(json.edges).toHaveLength(transitions.length);
  });

  it('refuses an unknown format with the formats it knows', () => {
    expect(() => renderDiagram(sessionMachine, 'svg' as never)).toThrow(/Formats: mermaid, dot, json/);
  });
});

describe('stately.config.json', () => {
  const dir = () => mkdtempSync(join(tmpdir(), 'steward-config-'));

  it('the repository config is valid and names the session machine', async () => {
    const { config, path } = loadStatelyConfig(process.cwd());
    expect(path).toMatch(/stately\.config\.json$/);
    expect(config.machines[0]).toMatchObject({ name: 'session', source: 'src/core/machines/session.machine.ts#sessionMachine' });
    expect(config.inspect).toBe('off');
    const machine = await loadMachine(config.machines[0]!.source, process.cwd());
    expect(machine.id).toBe('session');
  });

  it('without a file the defaults apply', () => {
    const d = dir();
    try {
      const { config, path } = loadStatelyConfig(d);
      expect(path).toBeNull();
      expect(config.inspector).toEqual({ host: '127.0.0.1', port: 4747 });
    } finally {
      rmSync(d, { recursive: true, force: true });
    }
  });

  it('errors name the file and the wrong fields', () => {
    const d = dir();
    try {
      writeFileSync(
        join(d, 'stately.config.json'),
        JSON.stringify({ machines: [{ name: 'x', source: 'no-hash.ts' }], inspector: { port: 70000 }, inspect: 'sometimes', extra: 1 }),
      );
      let message = '';
      try {
        loadStatelyConfig(d);
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toContain('stately.config.json is not valid');
      expect(message).toMatch(/machines\[0\]\.source: must be "path\/to\/file\.ts#exportName"/);
      expect(message).toMatch(/inspector\.port: must be 0–65535/);
      expect(message).toMatch(/inspect: must be "off", "local", "stately" or a ws:\/\//);
      expect(message).toMatch(/\(root\): Unrecognized key: "extra"|extra/);
      writeFileSync(join(d, 'stately.config.json'), '{ nope');
      expect(() => loadStatelyConfig(d)).toThrow(/is not valid JSON/);
    } finally {
      rmSync(d, { recursive: true, force: true });
    }
  });

  it('a machine source that does not export a machine says which exports are machines', async () => {
    await expect(loadMachine('src/core/machines/session.machine.ts#nope')).rejects.toThrow(
      /no machine exported as "nope"; machines exported there: sessionMachine/,
    );
    await expect(loadMachine('src/core/machines/missing.ts#x')).rejects.toThrow(/does not exist/);
  });
});
