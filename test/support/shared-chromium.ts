/**
 * The run's one Chromium, for the browser tests that start it with the common flags: the first
 * test file that asks starts it (chromium-server.mjs, a detached process: test files run in
 * worker processes that come and go, and the browser must outlive the one that started it), the
 * others wait for its address, and the run's global setup (global-setup.ts) stops it at the end.
 * A browser per file cost each file the start-up and the idle processes (browser, zygote, GPU,
 * network service) of a whole browser; only the pages' own work is the files' to pay.
 * No side effect on import: the global setup imports this to stop the browser, found or not.
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { root, until } from './cli-process.js';

/** What chromium-server.mjs writes down once the browser is up. */
interface SharedChromium {
  wsEndpoint: string;
}

const readyFile = (runDir: string) => join(runDir, 'chromium.json');
const failedFile = (runDir: string) => join(runDir, 'chromium.failed');
/** Whoever creates this folder starts the browser (mkdir is atomic). */
const lockDir = (runDir: string) => join(runDir, 'chromium.lock');
/** The server process's pid, written as soon as it is started: stopping it closes the browser. */
const pidFile = (runDir: string) => join(lockDir(runDir), 'pid');

/**
 * The address (for playwright-core's `chromium.connect`) of the run's browser under `runDir`,
 * started with `launch` by the first caller; a lock folder makes the others wait for it.
 */
export async function sharedChromiumEndpoint(runDir: string, launch: { executablePath: string; args: readonly string[] }): Promise<string> {
  const ready = readyFile(runDir);
  const failed = failedFile(runDir);
  let started: (() => void) | undefined;
  try {
    mkdirSync(lockDir(runDir));
    started = startServer(runDir, launch);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  try {
    await until(() => existsSync(ready) || existsSync(failed), `${ready} (the run's Chromium to start)`, 60_000);
  } finally {
    started?.();
  }
  if (existsSync(failed)) throw new Error(`the run's Chromium did not start:\n${readFileSync(failed, 'utf8')}`);
  return (JSON.parse(readFileSync(ready, 'utf8')) as SharedChromium).wsEndpoint;
}

/** Starts chromium-server.mjs detached; returns what stops watching it once its outcome is written. */
function startServer(runDir: string, launch: { executablePath: string; args: readonly string[] }): () => void {
  const log = join(runDir, 'chromium.log');
  const output = openSync(log, 'a');
  const server = spawn(
    process.execPath,
    [join(root, 'test/support/chromium-server.mjs'), readyFile(runDir), failedFile(runDir), JSON.stringify(launch), String(process.ppid)],
    {
      cwd: root,
      detached: true,
      stdio: ['ignore', output, output],
    },
  );
  closeSync(output); // the server has its own
  server.unref();
  writeFileSync(pidFile(runDir), String(server.pid));
  // A server that dies before it could say why (a bad install, say) must not leave the files waiting.
  const died = (code: number | null, signal: NodeJS.Signals | null) => {
    if (existsSync(readyFile(runDir)) || existsSync(failedFile(runDir))) return;
    writeFileSync(failedFile(runDir), `chromium-server.mjs exited (${signal ?? `code ${code}`}):\n${readFileSync(log, 'utf8')}`);
  };
  server.once('exit', died);
  return () => server.off('exit', died);
}

/**
 * Stops the run's browser if a test file started one (the global setup's teardown, also at
 * vitest's exit): SIGTERM makes the server close the browser, remove its profile and exit.
 */
export function stopSharedChromium(runDir: string): void {
  const pid = existsSync(pidFile(runDir)) ? Number(readFileSync(pidFile(runDir), 'utf8')) : 0;
  if (!(pid > 0)) return;
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    // already gone (the browser went away by itself)
  }
}
