/**
 * A command run inside the worker (test/support/cli-in-process.ts) leaves nothing behind:
 * no open handles (store, timers, servers) and no signal listeners, so the files that share a
 * worker do not pile them up; and its exit code is returned, never set on the worker's process.
 */
import { expect, it } from 'vitest';
import { parseJson, runCli } from '../support/cli-process.js';
import { useTempDir } from '../support/temp.js';

const tmp = useTempDir('steward-in-process-');

/** What keeps this process alive, by kind ('Timeout', 'FSReqCallback', 'TCPSocketWrap'…), sorted. */
const resources = () => process.getActiveResourcesInfo().sort();

it('new, send, show, list and a failure in the worker leave no handle, no signal listener and no exit code behind', async () => {
  const db = tmp.path('steward.db');
  // Once first: the compiled bundle is imported (and the build made) by the first command.
  expect((await runCli(['list'], { db })).code).toBe(0);
  const before = { resources: resources(), sigint: process.listenerCount('SIGINT'), sigterm: process.listenerCount('SIGTERM'), exitCode: process.exitCode };
  const { id } = parseJson<{ id: string }>(await runCli(['new', '--package', 'tiny', '--json'], { db }));
  expect((await runCli(['send', id, 'input', '--text', 'Hello'], { db })).code).toBe(0);
  expect((await runCli(['run', '--session', id], { db })).code).toBe(0);
  expect((await runCli(['show', id], { db })).code).toBe(0);
  expect((await runCli(['show', 's_missing'], { db })).code).toBe(1);
  expect((await runCli(['--help'], { db })).code).toBe(0);
  expect((await runCli(['nosuchcommand'], { db })).code).toBe(1);
  expect({ resources: resources(), sigint: process.listenerCount('SIGINT'), sigterm: process.listenerCount('SIGTERM'), exitCode: process.exitCode }).toEqual(
    before,
  );
});
