/**
 * The colours of a command's output, decided from its own I/O (./io.ts) by picocolors' rule:
 * off with NO_COLOR, on with FORCE_COLOR or CI, else on when stdout is a terminal (not a
 * "dumb" one). picocolors' default export decides once, from the process, when it is loaded.
 */
import pc from 'picocolors';
import type { CliIo } from './io.js';

export type Colors = ReturnType<typeof pc.createColors>;

export function colorsFor(io: Pick<CliIo, 'env' | 'stdout'>): Colors {
  const { env } = io;
  const enabled = !('NO_COLOR' in env) && ('FORCE_COLOR' in env || 'CI' in env || (Boolean(io.stdout.isTTY) && env.TERM !== 'dumb'));
  return pc.createColors(enabled);
}
