/**
 * Runs the real `steward` command for the tests in test/cli: the CLI compiled from the current
 * sources once per run (cli-build.ts; never the repo's dist/, which may be stale). `runCli` runs
 * it inside the test's worker by default (`main(argv, io)` of the same bundle, see
 * cli-in-process.ts); `{ process: true }`, `permissionsBite` and `startCli` start
 * bin/steward.mjs as a child process, for what is about the process itself (signals, crashes,
 * leases between processes, long-running commands, terminals, start-up). test/support/steward-src.mjs
 * runs the same CLI through tsx; the installed tarball's is tested in test/consumer. Either
 * way the command gets its own SQLite file (STEWARD_DB), no colours, stdin that is not a
 * terminal, and no OPENAI_* settings unless a test passes them (so it uses the offline demo model).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compiledCli } from './cli-build.js';
import { runInProcess } from './cli-in-process.js';

export const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
/** The compiled bin/steward.mjs of the current sources (built on the first call). */
export const cliBin = (): string => compiledCli();

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** How long a command may take unless a test says otherwise. */
const DEFAULT_TIMEOUT_MS = 30_000;

export interface CliOptions {
  db: string;
  /** Extra environment, e.g. OPENAI_BASE_URL of a fake server. */
  env?: Record<string, string>;
  /** Written to stdin, which is then closed (stdin is a pipe: never a terminal). */
  input?: string;
  timeoutMs?: number;
  /** The working directory (default: the repository root). */
  cwd?: string;
  /**
   * Run without the capabilities that let root ignore file permissions (CAP_DAC_OVERRIDE,
   * CAP_DAC_READ_SEARCH), through util-linux's `setpriv`: a test running as root sees
   * permissions bite while the process can still read the checkout, wherever it lies.
   */
  permissionsBite?: boolean;
  /** Start bin/steward.mjs as a child process instead of running the command in this worker (always so with permissionsBite). */
  process?: boolean;
}

/** The parent's environment without anything that would pick a model or a store. */
export function cliEnv(db: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    // npm_* (set when the tests run under npx or npm) would make hints say `npx steward`.
    if (key.startsWith('OPENAI_') || key.startsWith('STEWARD_') || key.startsWith('npm_') || key === 'FORCE_COLOR') continue;
    env[key] = value;
  }
  return { ...env, STEWARD_DB: db, NO_COLOR: '1', ...extra };
}

export interface RunningCli {
  child: ChildProcess;
  /** Output so far. */
  readonly stdout: string;
  readonly stderr: string;
  result: Promise<CliResult>;
}

/** Starts `steward ...args` (or another command line with `command`). */
export function startCli(args: string[], options: CliOptions, command: string[] = [process.execPath, cliBin()]): RunningCli {
  const [file, ...rest] = options.permissionsBite ? ['setpriv', '--bounding-set=-dac_override,-dac_read_search', '--', ...command] : command;
  const child = spawn(file!, [...rest, ...args], {
    cwd: options.cwd ?? root,
    env: cliEnv(options.db, options.env),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdin!.end(options.input ?? '');
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const result = new Promise<CliResult>((resolveResult, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`steward ${args.join(' ')} did not finish within ${timeoutMs} ms.\nstdout:\n${stdout}\nstderr:\n${stderr}`));
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolveResult({ code, signal, stdout, stderr });
    });
  });
  return {
    child,
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    result,
  };
}

/** Runs `steward ...args` to its end: in this worker, unless `process` or `permissionsBite` asks for a child process. */
export async function runCli(args: string[], options: CliOptions): Promise<CliResult> {
  if (options.process || options.permissionsBite) return startCli(args, options).result;
  const result = await runInProcess({
    args,
    env: cliEnv(options.db, options.env),
    cwd: options.cwd ?? root,
    input: options.input ?? '',
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  });
  return { ...result, signal: null };
}

/** Parses a command's --json output, with the whole output in the error when it is not JSON. */
export function parseJson<T = any>(result: CliResult): T {
  try {
    return JSON.parse(result.stdout) as T;
  } catch {
    throw new Error(`not JSON (exit ${result.code}):\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`);
  }
}

/** Polls `check` until it returns a value other than undefined/false. */
export async function until<T>(check: () => T | undefined | false | Promise<T | undefined | false>, what: string, timeoutMs = 20_000): Promise<T> {
  const start = Date.now();
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
