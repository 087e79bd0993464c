/**
 * The CLI's live progress during a fan-out: while several workers write at once, the
 * spinner's status names them all (not the last one started), and says who still writes
 * once one finished; the transcript gets one line per finished round, by worker.
 */
import pc from 'picocolors';
import { expect, it } from 'vitest';
import { autopilot } from '../../src/cli/autopilot.js';
import { followProgress } from '../../src/cli/progress.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import { useTempDir } from '../support/temp.js';
import { runTogether, submitOwn, TRIO, TrioModel, trioPackage } from '../support/trio-package.js';

const temp = useTempDir('steward-fan-out-progress-');

it('names the workers writing at once, then those still writing', async () => {
  // All three wait until the third has started; east answers last.
  let started = 0;
  let allStarted!: () => void;
  const together = new Promise<void>((resolve) => (allStarted = resolve));
  let eastGo!: () => void;
  const east = new Promise<void>((resolve) => (eastGo = resolve));
  const model = new TrioModel([runTogether(TRIO)], async (id) => {
    if (++started === 3) allStarted();
    await together;
    if (id === 'east') await east;
    return submitOwn(id);
  });
  const session = await createRuntime({ model, packagesDir: trioPackage(temp.path('pkgs')) }).createSession({ packageId: 'trio' });
  const statuses: string[] = [];
  const lines: string[] = [];
  const off = followProgress(session, { modelLabel: 'trio', status: (s) => statuses.push(s), line: (l) => lines.push(l) });
  try {
    const sent = session.send({ type: 'user_submitted_input', text: 'Notes.' });
    await together;
    expect(statuses.at(-1)).toMatch(/^Workers north, south, east writing at once · burst \d+\/12 · trio/);
    // North and south answer; east still writes, alone: the status says so once the others finished.
    await expect.poll(() => lines.filter((l) => /worker (north|south)/.test(l)).length).toBe(2);
    expect(statuses.at(-2)).toMatch(/^Workers (north|south), east writing at once · last round/);
    expect(statuses.at(-1)).toMatch(/^Worker east writing · last round .* → submit · \d+ tokens in all$/);
    eastGo();
    expect(await sent).toMatchObject({ ok: true, view: { state: 'waiting_user.review_artifact' } });
    expect(
      lines
        .filter((l) => l.startsWith('✓ worker'))
        .map((l) => l.split(' · ')[0])
        .sort(),
    ).toEqual(['✓ worker east', '✓ worker north', '✓ worker south']);
  } finally {
    off();
  }
});

it("the autopilot's transcript says when the workers of a fan-out write at once, then approves and accepts each item", async () => {
  const model = new TrioModel([runTogether(TRIO, true)], (id) => submitOwn(id));
  const runtime = createRuntime({ model, packagesDir: trioPackage(temp.path('pkgs-auto')) });
  const session = await runtime.createSession({ packageId: 'trio' });
  const lines: string[] = [];
  const code = await autopilot(session, {
    request: 'Notes.',
    packageId: 'trio',
    modelLabel: 'trio',
    packages: runtime.packages,
    resume: 'steward run',
    write: (text) => lines.push(text),
    warn: (text) => lines.push(text),
    colors: pc.createColors(false),
  });
  expect(code).toBe(0);
  expect(lines).toContain('Waiting for you: approve or reject 3 proposed steps, one at a time (north, south, east).');
  expect(lines.filter((l) => l.startsWith('→ (auto)'))).toEqual([
    '→ (auto) request: Notes.',
    '→ (auto) approve north (run_north)',
    '→ (auto) approve south (run_south)',
    '→ (auto) approve east (run_east)',
    expect.stringMatching(/^→ \(auto\) accept a\d$/),
    expect.stringMatching(/^→ \(auto\) accept a\d$/),
    expect.stringMatching(/^→ \(auto\) accept a\d$/),
  ]);
  expect(lines).toContainEqual(expect.stringMatching(/^ {2}… Workers north, south, east writing at once · burst \d+\/12 · trio$/));
});
