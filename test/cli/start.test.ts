/**
 * `npm start` with stdin not a terminal: the bundled package runs to `done` on the offline
 * demo model, every step approved and every artifact accepted, and the transcript shows
 * each wait, each step, each artifact's tag bodies and the final summary.
 */
import { expect, it } from 'vitest';
import { SqliteStore } from '../../src/index.js';
import { startCli } from '../support/cli-process.js';
import { useTempDir } from '../support/temp.js';

/** Child processes start in ~1 s each (tsx); leave room for a busy machine. */
const CLI_TIMEOUT = 90_000;

const tmp = useTempDir('steward-start-');

it(
  'npm start without a terminal runs the demo to done and prints the transcript',
  async () => {
    const db = tmp.path('steward.db');
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const { code, stdout, stderr } = await startCli(['start', '--silent'], { db, timeoutMs: 60_000, env: { npm_config_update_notifier: 'false' } }, [npm])
      .result;
    expect(stderr).toBe('');
    expect(code).toBe(0);

    expect(stdout).toContain('package short-story · model: demo model (no LLM)');
    expect(stdout).toContain('Waiting for you: describe the work you want.');
    expect(stdout).toContain('→ (auto) request: A short story about a lighthouse keeper');
    expect(stdout).toContain('… Manager thinking · burst 1/12 · demo model (no LLM)');
    for (const [n, worker, tag] of [
      [1, 'brief-writer', 'brief'],
      [2, 'outliner', 'outline'],
      [3, 'drafter', 'draft'],
      [4, 'critic', 'critique'],
    ] as const) {
      expect(stdout).toContain(`Waiting for you: approve or reject the next step (${worker}, asked for by the manager).`);
      expect(stdout).toContain(`── Proposed step · run ${worker} · demo model (no LLM) ──`);
      expect(stdout).toContain(`→ (auto) approve ${worker}`);
      expect(stdout).toContain(`── Artifact a${n} by ${worker} · ${tag} v1 · demo model (no LLM) ──\n# ${tag} (demo model (no LLM))`);
      expect(stdout).toContain(`→ (auto) accept a${n}`);
    }
    expect(stdout).toContain(
      '── Summary · demo model (no LLM) ──\n[demo model (no LLM)] Every step is accepted: brief-writer → brief, outliner → outline, drafter → draft, critic → critique.',
    );
    expect(stdout).toMatch(/Session s_\w+ is done \(14 model rounds\)/);

    const store = new SqliteStore(db);
    try {
      const [session] = (await store.list()).sessions;
      expect(session).toMatchObject({ packageId: 'short-story', state: 'done' });
      const journal = await store.journal(session!.id);
      expect(journal.map((e) => e.seq)).toEqual(journal.map((_, i) => i + 1));
      expect(journal.at(-1)!.state).toBe('done');
    } finally {
      await store.close();
    }
  },
  CLI_TIMEOUT,
);
