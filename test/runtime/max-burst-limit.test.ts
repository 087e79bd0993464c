/**
 * maxBurst has one upper bound, MAX_BURST_LIMIT (src/core/limits.ts), with one message: the
 * library (createRuntime, createSession), the CLI's --max-burst and serve's POST /sessions
 * refuse 1,001 and take 1,000.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LimitExceededError } from '../../src/core/errors.js';
import { MAX_BURST_ADVICE, MAX_BURST_LIMIT } from '../../src/core/limits.js';
import { ScriptedModel } from '../../src/models/scripted-model.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import { startServe } from '../../src/serve/server.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { client } from '../serve/http.js';
import { parseJson, runCli } from '../support/cli-process.js';

const OVER = MAX_BURST_LIMIT + 1;
const dir = mkdtempSync(join(tmpdir(), 'steward-max-burst-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the maxBurst limit', () => {
  it('is 1,000 rounds and says why', () => {
    expect(MAX_BURST_LIMIT).toBe(1_000);
    expect(MAX_BURST_ADVICE).toContain('the limit is 1000 rounds (MAX_BURST_LIMIT)');
  });

  it('library: createRuntime and createSession refuse 1,001 with a LimitExceededError naming the limit; 1,000 is fine', async () => {
    const model = new ScriptedModel();
    let thrown: unknown;
    try {
      createRuntime({ model, maxBurst: OVER });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(LimitExceededError);
    expect(thrown).toMatchObject({
      code: 'limit_exceeded',
      limit: 'maxBurst',
      max: MAX_BURST_LIMIT,
      actual: OVER,
      message: `createRuntime: maxBurst is ${OVER}; ${MAX_BURST_ADVICE}`,
    });
    const runtime = createRuntime({ model, maxBurst: MAX_BURST_LIMIT });
    await expect(runtime.createSession({ maxBurst: OVER })).rejects.toMatchObject({
      code: 'limit_exceeded',
      limit: 'maxBurst',
      message: `createSession: maxBurst is ${OVER}; ${MAX_BURST_ADVICE}`,
    });
    expect((await runtime.createSession()).view().maxBurst).toBe(MAX_BURST_LIMIT);
  });

  it('serve: POST /sessions with maxBurst 1,001 is a 400 whose issue names the limit', async () => {
    const store = new MemoryStore();
    const server = await startServe({ runtime: createRuntime({ model: new ScriptedModel(), store }), store, port: 0, log: () => {} });
    try {
      const http = client(server.url);
      const over = await http.post('/sessions', { packageId: 'tiny', maxBurst: OVER });
      expect(over.status).toBe(400);
      expect(over.body.error.code).toBe('invalid_request');
      expect(over.body.error.issues).toEqual([{ path: 'maxBurst', message: `is more than ${MAX_BURST_LIMIT}; ${MAX_BURST_ADVICE}` }]);
      expect(over.body.error.message).toBe(`Invalid body: maxBurst: is more than ${MAX_BURST_LIMIT}; ${MAX_BURST_ADVICE}`);
      const at = await http.post('/sessions', { packageId: 'tiny', maxBurst: MAX_BURST_LIMIT });
      expect(at.status).toBe(201);
      expect(at.body.view.maxBurst).toBe(MAX_BURST_LIMIT);
    } finally {
      await server.close();
    }
  });

  it('CLI: steward new and run refuse --max-burst 1001 with the message; new takes 1000', async () => {
    const db = join(dir, 'steward.db');
    const [created, refusedNew, refusedRun] = await Promise.all([
      runCli(['new', '--package', 'tiny', '--max-burst', String(MAX_BURST_LIMIT), '--json'], { db }),
      runCli(['new', '--package', 'tiny', '--max-burst', String(OVER)], { db }),
      runCli(['run', '--package', 'tiny', '--max-burst', String(OVER)], { db }),
    ]);
    expect(created.code, created.stderr).toBe(0);
    expect(parseJson<{ maxBurst: number }>(created).maxBurst).toBe(MAX_BURST_LIMIT);
    for (const refused of [refusedNew, refusedRun]) {
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(`${OVER} rounds is too many; ${MAX_BURST_ADVICE}`);
    }
    // Nothing was created by the refused commands.
    const list = await runCli(['list', '--json'], { db });
    expect(parseJson<unknown[]>(list)).toHaveLength(1);
  }, 90_000);
});
