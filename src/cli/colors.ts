/**
 * The colours of a command's output, decided from its own I/O (./io.ts) by picocolors' rule:
 * off with NO_COLOR, on with FORCE_COLOR or CI, else on when stdout is a terminal (not a
 * "dumb" one). picocolors' default export decides once, from the process, when it is loaded. Commander's
 * help follows the same rule.
 */
import pc from 'picocolors';
import type { CliIo, CliOutput } from './io.js';

export type Colors = ReturnType<typeof pc.createColors>;

/** Whether text written to `stream` gets colours: one rule for the command's output and commander's help. */
export function colorsOn(env: CliIo['env'], stream: CliOutput): boolean {
  return !('NO_COLOR' in env) && ('FORCE_COLOR' in env || 'CI' in env || (Boolean(stream.isTTY) && env.TERM !== 'dumb'));
}

export function colorsFor(io: Pick<CliIo, 'env' | 'stdout'>): Colors {
  return pc.createColors(colorsOn(io.env, io.stdout));
}
