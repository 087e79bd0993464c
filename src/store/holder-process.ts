/**
 * The process that holds a lease, as its lease row records it (PostgreSQL `leases.process`):
 * enough for another process on the same machine to know for certain that the holder is
 * gone, so that its session need not wait for the lease to run out.
 *
 * Linux only. A pid alone proves nothing: once its process is gone, the kernel gives the pid
 * to another one. The process's start time (field 22 of /proc/PID/stat, clock ticks since
 * boot) never changes while it lives, so pid and start time together name one process. They
 * are comparable only within one boot of one kernel (`boot_id`) and one pid namespace (two
 * containers may share a host name, and each numbers its own pids). Anywhere else, or
 * where /proc cannot be read, nothing is recorded or nothing can be proved: the holder then
 * counts as alive, and its lease runs out by itself.
 */
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import * as z from 'zod';

/** A lease holder's process, as its lease row records it (read back through this schema). */
export const HolderProcessSchema = z.object({
  host: z.string(),
  /** /proc/sys/kernel/random/boot_id: one boot of one machine. */
  bootId: z.string().min(1),
  /** /proc/self/ns/pid, e.g. "pid:[4026531836]": pids mean the same process only within one. */
  pidNamespace: z.string().min(1),
  pid: z.number().int().positive(),
  /** Field 22 of /proc/PID/stat: when the process started, in clock ticks since boot. */
  startTicks: z.number().int().nonnegative(),
});
export type HolderProcess = z.infer<typeof HolderProcessSchema>;

/**
 * This process as a lease row records it; null where that cannot be read (not Linux, no /proc).
 *
 * @example
 * const me = thisProcess(); // { host: 'web-3', bootId: '…', pidNamespace: 'pid:[4026531836]', pid: 4711, startTicks: 912345 }
 */
export function thisProcess(): HolderProcess | null {
  try {
    const stat = statOf(readFileSync('/proc/self/stat', 'utf8'));
    if (!stat) return null;
    const bootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    const pidNamespace = readlinkSync('/proc/self/ns/pid');
    return HolderProcessSchema.parse({ host: hostname(), bootId, pidNamespace, pid: process.pid, startTicks: stat.startTicks });
  } catch {
    return null;
  }
}

/**
 * The fields of a /proc/PID/stat line that tell a process apart: its state (field 3) and start
 * time (field 22). The command name (field 2) is in parentheses and may itself hold spaces and
 * parentheses, so fields are counted from the last ")". Null when the line is not one.
 *
 * @example
 * statOf('4711 (steward (x)) S 1 4711 4711 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 912345 …'); // { state: 'S', startTicks: 912345 }
 */
export function statOf(line: string): { state: string; startTicks: number } | null {
  const end = line.lastIndexOf(')');
  if (end < 0) return null;
  const fields = line.slice(end + 2).split(' ');
  // fields[0] is field 3; field 22 is 19 further on.
  const state = fields[0];
  const startTicks = Number(fields[19]);
  return state && /^\d+$/.test(fields[19] ?? '') && Number.isSafeInteger(startTicks) ? { state, startTicks } : null;
}

/**
 * Whether the lease holder `holder` is known for certain to be gone, as seen from `here`
 * (default: this process): both on one machine, in one boot and one pid namespace, and no
 * process with its pid and start time exists. False whenever that cannot be proved (another
 * host, an unreadable /proc, a holder that recorded no process).
 *
 * @example
 * const holder = await store.leases.holder(id);
 * if (holder && holderGone(holder.process)) await store.leases.acquireLease(id, owner, ms, { goneToken: holder.token });
 */
export function holderGone(holder: HolderProcess | null, here: HolderProcess | null = thisProcess()): boolean {
  if (!holder || !here) return false;
  if (holder.host !== here.host || holder.bootId !== here.bootId || holder.pidNamespace !== here.pidNamespace) return false;
  let line: string;
  try {
    line = readFileSync(`/proc/${holder.pid}/stat`, 'utf8');
  } catch (error) {
    // No such process (ESRCH: it ended while being read). Anything else (EACCES) proves nothing.
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ESRCH';
  }
  const stat = statOf(line);
  // A killed process its parent has not reaped yet keeps its start time: it counts as there
  // (its lease then runs out by itself).
  return stat !== null && stat.startTicks !== holder.startTicks;
}
