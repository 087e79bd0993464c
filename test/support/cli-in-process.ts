/**
 * Runs a `steward` command inside the test worker: `main(argv, io)` of the compiled CLI (the
 * same bundle bin/steward.mjs loads, built once per run by cli-build.ts), with the command's
 * environment, folder and streams given to it instead of a process's. A command started as a
 * process costs most of half a CPU-second in starting Node and loading the bundle; here the
 * bundle is loaded once per worker. `main` closes what the command opened before it resolves.
 */
import { Readable, Writable } from 'node:stream';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { CliIo } from '../../src/cli/io.js';
import { compiledPackage } from './cli-build.js';

type Main = (argv: readonly string[], io: CliIo) => Promise<number>;

/** A stream that keeps what is written to it. */
function collector(): { stream: Writable; text: () => string } {
  let text = '';
  const stream = new Writable({
    decodeStrings: false,
    write(chunk: string | Buffer, _encoding, done) {
      text += typeof chunk === 'string' ? chunk : chunk.toString('utf8');
      done();
    },
  });
  return { stream, text: () => text };
}

/** The compiled CLI's `main`: its bundle is imported once per worker (Node's module cache). */
async function compiledMain(): Promise<Main> {
  const bundle = pathToFileURL(join(compiledPackage(), 'dist/cli/bundle/main.js')).href;
  return ((await import(bundle)) as { main: Main }).main;
}

export interface InProcessRun {
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
  input: string;
  timeoutMs: number;
}

/** Runs `steward ...args` in this worker; resolves as a process's result would (no signal), rejects after `timeoutMs`. */
export async function runInProcess({ args, env, cwd, input, timeoutMs }: InProcessRun): Promise<{ code: number; stdout: string; stderr: string }> {
  const main = await compiledMain();
  const stdout = collector();
  const stderr = collector();
  const run = main([process.execPath, 'steward', ...args], { env, cwd, stdin: Readable.from([input]), stdout: stdout.stream, stderr: stderr.stream });
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new Error(
            `steward ${args.join(' ')} (in the test's process) did not finish within ${timeoutMs} ms.\nstdout:\n${stdout.text()}\nstderr:\n${stderr.text()}`,
          ),
        ),
      timeoutMs,
    );
  });
  try {
    const code = await Promise.race([run, timedOut]);
    return { code, stdout: stdout.text(), stderr: stderr.text() };
  } finally {
    clearTimeout(timer);
  }
}
