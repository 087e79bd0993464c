/**
 * The CLI's live progress from the event stream: the autopilot's transcript gets a line per
 * model round (time, tokens, tools) and per refused tool call; model-written text never
 * reaches the terminal with its control characters.
 */
import pc from 'picocolors';
import { describe, expect, it } from 'vitest';
import { autopilot } from '../../src/cli/autopilot.js';
import { LiveLine } from '../../src/cli/live-line.js';
import { followProgress, plain } from '../../src/cli/progress.js';
import { createRuntime } from '../../src/index.js';
import { scriptedCall, ScriptedModel } from '../../src/testing.js';

describe('progress lines', () => {
  it('strips escape sequences, controls and bidi overrides, and cuts long text', () => {
    expect(plain('run\x1b[2J\x1b]0;pwned\x07_worker')).toBe('run [2J ]0;pwned _worker');
    expect(plain('a\r\nb\u202ec\u0085d')).toBe('a b c d');
    expect(plain('e\u2028f\u061Cg\u2029h')).toBe('e f g h');
    expect(plain('x'.repeat(500), 20)).toHaveLength(20);
  });

  it('the autopilot prints each round with its time, tokens and tools, and each refusal with its rule', async () => {
    const model = new ScriptedModel([
      {
        agent: 'manager',
        toolCalls: [scriptedCall('evil\x1b[31mtool'), scriptedCall('run_worker', { workerId: 'echo', reason: 'go', requiresApproval: false })],
        usage: { promptTokens: 120, completionTokens: 30 },
      },
      { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { note: 'Tea.' } })], usage: { promptTokens: 80, completionTokens: 20 } },
      { agent: 'manager', toolCalls: [scriptedCall('finish', { summary: 'All done.' })] },
    ]);
    const runtime = createRuntime({ model });
    const session = await runtime.createSession({ packageId: 'tiny' });
    const lines: string[] = [];
    const code = await autopilot(session, {
      request: 'A note about tea',
      packageId: 'tiny',
      modelLabel: model.label,
      packages: runtime.packages,
      resume: 'steward run',
      write: (text) => lines.push(text),
      warn: (text) => lines.push(text),
      colors: pc.createColors(false),
    });
    expect(code).toBe(0);
    const progress = lines.filter((l) => /^ {4}[✓✗■]/.test(l)).map((l) => l.trim().replace(/\d+ ms/, 'T'));
    expect(progress).toEqual([
      '✓ manager · burst 1/12 · T · 120+30 tokens → evil [31mtool, run_worker',
      expect.stringMatching(/^✗ refused evil \[31mtool \(actorMayUseTool\): There is no tool named "evil \[31mtool"/),
      '✓ worker echo · burst 2/12 · T · 80+20 tokens → submit',
      '✓ manager · burst 1/12 · T → finish',
    ]);
    expect(lines.join('\n')).not.toContain('\x1b[31m');
    expect(session.listenerCount).toBe(0);
  });

  it('gives the spinner a status at each round start with the previous round and the total', async () => {
    const model = new ScriptedModel([
      {
        agent: 'manager',
        toolCalls: [scriptedCall('run_worker', { workerId: 'echo', reason: 'go', requiresApproval: false })],
        usage: { promptTokens: 100, completionTokens: 50 },
      },
      { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: { note: 'Tea.' } })] },
    ]);
    const session = await createRuntime({ model }).createSession({ packageId: 'tiny' });
    const status: string[] = [];
    const off = followProgress(session, { modelLabel: 'm', status: (text) => status.push(text) });
    await session.send({ type: 'user_submitted_input', text: 'tea' });
    off();
    expect(status.map((s) => s.replace(/\d+ ms/, 'T'))).toEqual([
      'Manager thinking · burst 1/12 · m',
      'Worker echo writing · burst 2/12 · m · last round T, 150 tokens → run_worker · 150 tokens in all',
    ]);
  });
});

describe('drafts and text as they stream', () => {
  const steps = () => [
    {
      agent: 'manager' as const,
      content: 'I will ask echo\x1b[2J to restate it.',
      toolCalls: [scriptedCall('run_worker', { workerId: 'echo', reason: 'go', requiresApproval: false })],
    },
    { agent: 'worker' as const, toolCalls: [scriptedCall('submit', { outputs: { note: 'Tea\x1b[31m for two,\nand two for tea.' } })] },
    { agent: 'manager' as const, toolCalls: [scriptedCall('finish', { summary: 'All done.' })] },
  ];

  it('a plain log gets one line per finished text and per finished draft, not one per piece', async () => {
    const model = new ScriptedModel(steps(), { streamPieceChars: 3 });
    const runtime = createRuntime({ model });
    const session = await runtime.createSession({ packageId: 'tiny' });
    const lines: string[] = [];
    const code = await autopilot(session, {
      request: 'A note about tea',
      packageId: 'tiny',
      modelLabel: model.label,
      packages: runtime.packages,
      resume: 'steward run',
      write: (text) => lines.push(text),
      warn: (text) => lines.push(text),
      colors: pc.createColors(false),
    });
    expect(code).toBe(0);
    const drafted = lines.filter((l) => l.trim().startsWith('✎')).map((l) => l.trim());
    expect(drafted).toEqual(['✎ manager: I will ask echo [2J to restate it.', '✎ note by echo: 34 characters drafted']);
    expect(lines.join('\n')).not.toContain('\x1b[2J');
  });

  it("a terminal's live line grows with the manager's text and the draft, one safe line of the given width", async () => {
    const model = new ScriptedModel(steps().slice(0, 2), { streamPieceChars: 4 });
    const session = await createRuntime({ model }).createSession({ packageId: 'tiny' });
    const live: string[] = [];
    const off = followProgress(session, { modelLabel: 'm', live: (text) => live.push(text), width: 40 });
    await session.send({ type: 'user_submitted_input', text: 'tea' });
    off();
    const manager = live.filter((l) => l.startsWith('manager: '));
    const draft = live.filter((l) => l.startsWith('echo → note'));
    expect(manager.length).toBeGreaterThan(3);
    expect(manager.at(-1)).toBe('manager: …ll ask echo [2J to restate it.');
    expect(draft.length).toBeGreaterThan(3);
    expect(draft[0]).toBe('echo → note (3 characters): Tea');
    expect(draft.at(-1)).toBe('echo → note (34 characters): …o for tea.');
    for (const line of live) {
      expect(line.length).toBeLessThanOrEqual(40);
      // eslint-disable-next-line no-control-regex -- no control character reaches the terminal
      expect(line).not.toMatch(/[\x00-\x1f\x7f]/);
    }
  });

  it('the live line is redrawn in place and cleared before a normal line', () => {
    const out: string[] = [];
    const line = new LiveLine({ write: (text: string) => out.push(text), columns: 30 });
    line.clear();
    line.show('a draft that is longer than the terminal');
    line.clear();
    expect(out).toEqual(['\r\x1b[2Ka draft that is longer than t', '\r\x1b[2K']);
  });
});
