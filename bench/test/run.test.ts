/**
 * The benchmark harness works, as CI checks it (`npm run test:bench`): `bench/run.ts --quick`
 * runs every mode (each session's transcript is checked inside the run), prints the table and
 * writes the JSON. No assertion on timings: they depend on the machine.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { answer, createBaselineMachine, startBaseline } from '../baseline.js';
import { FakeModel } from '../fake-model.js';
import { MODES } from '../figures.js';
import { answerText, FIRST_INPUT, TranscriptError, verifyTranscript } from '../scenario.js';
import type { ChatMessage } from '../../src/index.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'steward-bench-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Figure {
  id: string;
  steward: number;
  baseline: number | null;
  ratio: number | null;
}

describe('the transcript check', () => {
  async function transcript(): Promise<{ messages: ChatMessage[]; calls: number }> {
    const model = new FakeModel();
    const actor = startBaseline(createBaselineMachine(model));
    model.begin();
    await answer(actor, FIRST_INPUT);
    for (let b = 1; b <= 3; b++) await answer(actor, answerText(b));
    return { messages: actor.getSnapshot().context.messages, calls: model.calls };
  }

  it('accepts the scripted session', async () => {
    const { messages, calls } = await transcript();
    expect(() => verifyTranscript('test', messages, calls)).not.toThrow();
  });

  it('fails on a lost tool result, a wrong read or a wrong call count', async () => {
    const { messages, calls } = await transcript();
    const firstTool = messages.findIndex((m) => m.role === 'tool');
    expect(() =>
      verifyTranscript(
        'test',
        messages.filter((_, i) => i !== firstTool),
        calls,
      ),
    ).toThrow(TranscriptError);
    const wrong = messages.map((m) =>
      m.role === 'tool' && m.content.includes('value-of-k0-') ? { ...m, content: m.content.replace('value-of-k0-', 'value-of-k1-') } : m,
    );
    expect(() => verifyTranscript('test', wrong, calls)).toThrow(/read k0/);
    expect(() => verifyTranscript('test', messages, calls + 1)).toThrow(/called 20 times/);
  });
});

describe('bench/run.ts --quick', () => {
  it('runs the scenario on Steward and the baseline and reports every figure', () => {
    const json = join(dir, 'results.json');
    // An earlier run to print the ratios beside (--compare): one figure and one part of it.
    const earlier = join(dir, 'earlier.json');
    writeFileSync(
      earlier,
      JSON.stringify({
        run: { date: '2026-12-01T00:00:00.000Z', loadavg: [1, 1, 1] },
        figures: [{ id: 'round', label: '1 round (hot)', ratio: 9.87 }],
        parts: [{ mode: 'chart-bare', roundRatio: 6.54, pauseResumeRatio: 3.21 }],
      }),
    );
    const run = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', 'bench/run.ts', '--quick', '--json', json, '--compare', earlier], {
      cwd: root,
      encoding: 'utf8',
      // Only against a hang: the load benchmark's tests run beside it, on a machine maybe shared.
      timeout: 540_000,
    });
    expect(run.stderr).not.toContain('bench failed');
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('1 round (hot)');
    expect(run.stdout).toContain('pause+resume, durable SQLite');
    expect(run.stdout).toContain(`JSON: ${json}`);
    // What each part costs, layer by layer, and the earlier run's ratios beside this one's.
    expect(run.stdout).toContain('What each part costs');
    expect(run.stdout).toContain(`Before (${earlier}, 2026-12-01T00:00:00.000Z, load 1.0 1.0 1.0) and now`);
    expect(run.stdout).toMatch(/1 round \(hot\)\s+9\.87×\s+\d+\.\d\d×\s+≤ 1\.5×/);
    expect(run.stdout).toMatch(/parts: session chart, bare turn, round\s+6\.54×\s+\d+\.\d\d×/);
    // PostgreSQL beside SQLite and the serve throughput, or one line saying why not.
    expect(run.stdout).toMatch(/PostgreSQL \(throwaway local cluster|PostgreSQL: skipped — /);

    expect(run.stdout).toContain('growth: one session, burst →');
    const results = JSON.parse(readFileSync(json, 'utf8')) as {
      figures: Figure[];
      modes: Record<string, { sessions: number }>;
      parts: { mode: string; roundRatio: number; pauseResumeRatio: number }[];
      scenario: { callsPerSession: number };
      growth: { burst: number; snapshotBytes: number; contextMessages: number }[];
    };
    // The growth section: bursts 1, 10, 30, 60 of one long session; the context's window is bounded.
    expect(results.growth.map((p) => p.burst)).toEqual([1, 10, 30, 60]);
    expect(results.growth.at(-1)!.contextMessages).toBeLessThanOrEqual(60);
    for (const p of results.growth)
      expect(
        Object.values(p).every((v) => Number.isFinite(v)),
        JSON.stringify(p),
      ).toBe(true);
    expect(results.scenario.callsPerSession).toBe(19);
    expect(results.parts.map((p) => p.mode)).toEqual([
      'baseline-hot',
      'chart-bare',
      'chart-turns',
      'steward-hot',
      'steward-listened',
      'steward-memory',
      'steward-sqlite',
    ]);
    for (const p of results.parts)
      expect(
        [p.roundRatio, p.pauseResumeRatio].every((r) => Number.isFinite(r) && r > 0),
        p.mode,
      ).toBe(true);
    for (const mode of MODES) {
      expect(results.modes[mode]?.sessions).toBe(20);
    }
    const pg = (results as { postgres?: { throughput: Array<{ servers: number; perSecond: number }> } | null }).postgres;
    if (pg)
      expect(pg.throughput.map((t) => [t.servers, t.perSecond > 0])).toEqual([
        [1, true],
        [2, true],
        [4, true],
      ]);
    const ids = results.figures.map((f) => f.id);
    for (const id of [
      'round',
      'round_burst_1',
      'round_burst_2',
      'round_burst_3',
      'pause_resume_hot',
      'pause_resume_sqlite',
      'retained',
      'persisted_bytes',
      'persist_event_sqlite',
      'sqlite_append',
      'resume_long',
    ]) {
      expect(ids).toContain(id);
    }
    for (const f of results.figures) {
      expect(Number.isFinite(f.steward), f.id).toBe(true);
      if (f.baseline !== null) {
        expect(f.baseline, f.id).toBeGreaterThan(0);
        expect(Number.isFinite(f.ratio), f.id).toBe(true);
      }
    }
  }, 600_000);

  it('fails loudly on an unknown option', () => {
    const run = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', 'bench/run.ts', '--no-such-flag'], {
      cwd: root,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain('Unknown option --no-such-flag');
  }, 60_000);
});
