/**
 * A command run inside the worker (test/support/cli-in-process.ts) leaves nothing behind:
 * no open handles (store, timers, servers) and no signal listeners, so the files that share a
 * worker do not pile them up; and its exit code is returned, never set on the worker's process.
 */
import { createHook } from 'node:async_hooks';
import { expect, it } from 'vitest';
import { parseJson, runCli } from '../support/cli-process.js';
import { useTempDir } from '../support/temp.js';

const tmp = useTempDir('steward-in-process-');

/**
 * The resources that keep a process alive (handles, timers, file requests; not promise-based file
 * handles, whose end async_hooks tells only when they are collected) created between
 * `track()` and `seal()` and not closed yet: async_hooks tells each one's start and end, so one
 * a command left open shows, whatever the other files sharing the worker start or end meanwhile.
 */
const KEEPS_ALIVE = new Set([
  'Timeout',
  'TCPWRAP',
  'TCPSERVERWRAP',
  'PIPEWRAP',
  'PIPESERVERWRAP',
  'PROCESSWRAP',
  'SIGNALWRAP',
  'TTYWRAP',
  'UDPWRAP',
  'FSEVENTWRAP',
  'STATWATCHER',
  'FSREQCALLBACK',
]);
function track(): { seal: () => void; open: () => string[]; stop: () => void } {
  const open = new Map<number, string>();
  let sealed = false;
  const hook = createHook({
    init: (id, type) => void (!sealed && KEEPS_ALIVE.has(type) && open.set(id, type)),
    destroy: (id) => void open.delete(id),
  }).enable();
  return { seal: () => void (sealed = true), open: () => [...open.values()].sort(), stop: () => hook.disable() };
}

it('new, send, show, list and a failure in the worker leave no handle, no signal listener and no exit code behind', async () => {
  const db = tmp.path('steward.db');
  // Once first: the compiled bundle is imported (and the build made) by the first command.
  expect((await runCli(['list'], { db })).code).toBe(0);
  const before = { sigint: process.listenerCount('SIGINT'), sigterm: process.listenerCount('SIGTERM'), exitCode: process.exitCode };
  const opened = track();
  const { id } = parseJson<{ id: string }>(await runCli(['new', '--package', 'tiny', '--json'], { db }));
  expect((await runCli(['send', id, 'input', '--text', 'Hello'], { db })).code).toBe(0);
  expect((await runCli(['run', '--session', id], { db })).code).toBe(0);
  expect((await runCli(['show', id], { db })).code).toBe(0);
  expect((await runCli(['show', 's_missing'], { db })).code).toBe(1);
  expect((await runCli(['--help'], { db })).code).toBe(0);
  expect((await runCli(['nosuchcommand'], { db })).code).toBe(1);
  // What the commands opened; a file closed or a socket ended as one returned may still be on its way: wait for it, bounded.
  opened.seal();
  try {
    await expect.poll(opened.open, { timeout: 5_000 }).toEqual([]);
  } finally {
    opened.stop();
  }
  expect({ sigint: process.listenerCount('SIGINT'), sigterm: process.listenerCount('SIGTERM'), exitCode: process.exitCode }).toEqual(before);
});
