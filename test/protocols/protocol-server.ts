/**
 * What the protocol tests share: `steward serve` with ana's token (she acts only for herself),
 * stopped by the calling file's cleanup list with no AG-UI or A2A error logged meanwhile, and
 * the AG-UI run input that runAgUi takes directly.
 */
import type { RunAgentInput } from '@ag-ui/core';
import { expect } from 'vitest';
import type { Runtime } from '../../src/runtime/runtime.js';
import { startServe, type ServeHandle } from '../../src/serve/server.js';
import type { SqliteStore } from '../../src/store/sqlite-store.js';

export const ANA_TOKEN = 'token-of-ana-0123456789';

/** Serves `runtime` on a free port; `open` gets what closes the server, the runtime and the store, in that order. */
export async function serveForAna(runtime: Runtime, store: SqliteStore, open: Array<() => Promise<unknown>>): Promise<ServeHandle> {
  const logs: string[] = [];
  const server = await startServe({ runtime, store, port: 0, tokens: [{ name: 'ana', token: ANA_TOKEN, actForOthers: false }], log: (m) => logs.push(m) });
  open.push(async () => {
    await server.close();
    await runtime.close();
    store.close();
    expect(logs.filter((l) => /AG-UI|A2A/.test(l))).toEqual([]);
  });
  return server;
}

/** An AG-UI run's input on `threadId`, empty but for `extra`. */
export const runInput = (threadId: string, runId: string, extra: Partial<RunAgentInput>): RunAgentInput => ({
  threadId,
  runId,
  state: {},
  messages: [],
  tools: [],
  context: [],
  forwardedProps: {},
  ...extra,
});
