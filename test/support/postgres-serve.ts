/**
 * `steward serve` processes-in-a-test on one PostgreSQL database: each `server(url)` starts
 * a runtime and a serve on its own store (its own pool, as another server would have), and
 * `stop()` ends it; whatever a test leaves running is stopped after it, newest first.
 */
import { afterEach } from 'vitest';
import { DemoModel } from '../../src/models/demo-model.js';
import type { Model } from '../../src/core/models/model.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import { startServe, type ServeHandle } from '../../src/serve/server.js';
import { PostgresStore } from '../../src/store/postgres-store.js';

export interface PostgresServer {
  handle: ServeHandle;
  stop: () => Promise<void>;
}

export function usePostgresServers(): (url: string, model?: Model) => Promise<PostgresServer> {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  return async (url, model = new DemoModel()) => {
    const store = new PostgresStore(url);
    const runtime = createRuntime({ model, store });
    const handle = await startServe({ runtime, store, port: 0, log: () => {} });
    let stopped = false;
    const stop = async () => {
      if (stopped) return;
      stopped = true;
      await handle.close();
      await store.close();
    };
    cleanups.push(stop);
    return { handle, stop };
  };
}
