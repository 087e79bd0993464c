/**
 * Telling from this machine that a lease holder's process is gone: by pid and start time
 * (/proc/PID/stat), within one boot and one pid namespace; never for another host, an
 * unknown holder, or where /proc says nothing certain.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { holderGone, statOf, thisProcess, type HolderProcess } from '../../src/store/holder-process.js';

const onLinux = process.platform === 'linux';
const kills: Array<() => void> = [];
afterEach(() => kills.splice(0).forEach((kill) => kill()));

/** A process that lives until the test ends, as a lease row would record it. */
function liveHolder(): HolderProcess {
  const child = spawn('sleep', ['600'], { stdio: 'ignore' });
  kills.push(() => child.kill('SIGKILL'));
  const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8');
  return { ...thisProcess()!, pid: child.pid!, startTicks: Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]) };
}

const impossiblePid = () => Number(readFileSync('/proc/sys/kernel/pid_max', 'utf8').trim()) + 1;

describe('statOf', () => {
  it('reads the state and field 22 (start time) after the command name, whatever the name holds', () => {
    // A real line of a process named "a) (b c" (a name may hold spaces and parentheses).
    const line =
      '4711 (a) (b c) S 1 4711 4711 34816 4711 4194560 1012 0 0 0 3 1 0 0 20 0 1 0 912345 8527872 455 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n';
    expect(statOf(line)).toEqual({ state: 'S', startTicks: 912345 });
    expect(statOf('not a stat line')).toBeNull();
    expect(statOf('1 (x) S 1 2')).toBeNull();
  });
});

describe.skipIf(!onLinux)('holderGone', () => {
  it('records this process: its pid, and the start time /proc gives it', () => {
    const me = thisProcess();
    expect(me).toMatchObject({ pid: process.pid, bootId: expect.stringMatching(/\S/), pidNamespace: expect.stringMatching(/^pid:\[\d+\]$/) });
    expect(holderGone(me)).toBe(false);
  });

  it('a pid no process has on this machine: gone', () => {
    expect(holderGone({ ...thisProcess()!, pid: impossiblePid(), startTicks: 1 })).toBe(true);
  });

  it('a live pid with the start time it has: there; the same pid with another start time (reused by a new process): gone', () => {
    const live = liveHolder();
    expect(holderGone(live)).toBe(false);
    expect(holderGone({ ...live, startTicks: live.startTicks + 1 })).toBe(true);
  });

  it('a holder of another host, boot or pid namespace, or none, is never judged gone: its pids mean nothing here', () => {
    const dead = { ...thisProcess()!, pid: impossiblePid(), startTicks: 1 };
    expect(holderGone({ ...dead, host: 'web-7' })).toBe(false);
    expect(holderGone({ ...dead, bootId: 'another-boot' })).toBe(false);
    expect(holderGone({ ...dead, pidNamespace: 'pid:[1]' })).toBe(false);
    expect(holderGone(null)).toBe(false);
    // Nor where this process cannot say who it is (no /proc).
    expect(holderGone(dead, null)).toBe(false);
  });
});
