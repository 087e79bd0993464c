/**
 * What a `steward` command reads and writes besides its files and store: the environment, the
 * working directory and the three standard streams. `main(argv, io)` takes them explicitly, so
 * the same commands run as the `steward` process (`processIo()`) or inside another Node program
 * (the tests run most commands in their worker that way: no process to start for each).
 * A command never reads `process.env`, `process.cwd()` or the process's streams itself.
 */
import type { Readable, Writable } from 'node:stream';

/** An output stream; a terminal's has `isTTY` (and `columns`), which turn on live lines and pauses. */
export type CliOutput = Writable & { isTTY?: boolean; columns?: number };
/** The input stream; a terminal's has `isTTY` (interactive `steward run`). */
export type CliInput = Readable & { isTTY?: boolean };

export interface CliIo {
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  readonly stdin: CliInput;
  readonly stdout: CliOutput;
  readonly stderr: CliOutput;
}

/** The `steward` process's own environment, folder and streams. */
export function processIo(): CliIo {
  return { env: process.env, cwd: process.cwd(), stdin: process.stdin, stdout: process.stdout, stderr: process.stderr };
}
