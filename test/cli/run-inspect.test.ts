/**
 * `steward run --inspect …`: inspection never holds a session back. With an unreachable
 * WebSocket inspector the run still reaches done, says so once, and the process exits on its
 * own; with `--inspect local` the page is served while the session runs.
 */
import { expect, it } from 'vitest';
import { buildPage } from '../inspect/page-build.js';
import { runCli } from '../support/cli-process.js';
import { closedPort, useTempDir } from '../support/temp.js';

const CLI_TIMEOUT = 90_000;

const tmp = useTempDir('steward-run-inspect-');

it(
  'an unreachable ws:// inspector is reported once; the session completes and the process exits',
  async () => {
    const port = await closedPort();
    const started = Date.now();
    const { code, stdout, stderr } = await runCli(['run', '--auto', '--package', 'tiny', '--inspect', `ws://127.0.0.1:${port}`], {
      db: tmp.path('ws.db'),
      timeoutMs: 60_000,
    });
    expect(code).toBe(0);
    expect(stdout).toMatch(/Session s_\w+ is done/);
    const mentions = stderr.split('\n').filter((line) => line.includes(`127.0.0.1:${port}`));
    expect(mentions.length).toBe(1);
    expect(Date.now() - started).toBeLessThan(60_000);
  },
  CLI_TIMEOUT,
);

it(
  '--inspect local serves the inspector page while the session runs',
  async () => {
    await buildPage(); // the page the CLI serves (test/support/cli-build.ts)
    const { code, stdout, stderr } = await runCli(['run', '--auto', '--package', 'tiny', '--inspect', 'local'], {
      db: tmp.path('local.db'),
      timeoutMs: 60_000,
    });
    expect(code).toBe(0);
    expect(stderr).toMatch(/Inspector: http:\/\/127\.0\.0\.1:\d+\/\?token=\w+/);
    expect(stdout).toMatch(/Session s_\w+ is done/);
  },
  CLI_TIMEOUT,
);
