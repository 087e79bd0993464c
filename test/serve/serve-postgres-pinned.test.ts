/**
 * Pinned packages and idempotent sends on PostgreSQL with several processes: a runtime that
 * loaded an edited package resumes a session another runtime started, on the prompt it
 * started with; and the same POST with one Idempotency-Key to two `steward serve` servers on
 * one database appends one journal entry.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/runtime/runtime.js';
import { startServe } from '../../src/serve/server.js';
import { PostgresStore } from '../../src/store/postgres-store.js';
import { scriptedCall, ScriptedModel } from '../../src/testing.js';
import { copyTiny, echoSubmits, editEchoPrompt, NEW_PROMPT, OLD_PROMPT, proposeEcho, systemPrompt } from '../support/pinning.js';
import { postgresUnavailable } from '../support/postgres.js';
import { usePostgres } from '../support/use-postgres.js';
import { client } from './http.js';

const pg = usePostgres();
const root = mkdtempSync(join(tmpdir(), 'steward-pg-pin-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
const open = (url: string) => {
  const store = new PostgresStore(url);
  cleanups.push(() => store.close());
  return store;
};

describe.skipIf(postgresUnavailable !== null)('pinned packages and idempotent sends on PostgreSQL', () => {
  it('two runtimes: the one that loaded the edited prompt runs the session on the version it started with, until upgrade', async () => {
    const url = await pg.createDatabase();
    const packages = join(root, 'packages-a');
    mkdirSync(packages);
    copyTiny(packages);
    const a = createRuntime({ model: proposeEcho(), store: open(url), packagesDir: packages, leaseOwner: 'server-a' });
    const session = await a.createSession({ packageId: 'tiny' });
    const waiting = await session.send({ type: 'user_submitted_input', text: 'A ghost story.' });
    const pinned = waiting.view.packageVersion!;
    await session.close();

    editEchoPrompt(packages);
    const model = echoSubmits(2);
    const storeB = open(url);
    const b = createRuntime({ model, store: storeB, packagesDir: packages, leaseOwner: 'server-b' });
    const resumed = await b.resumeSession(session.id);
    const review = await resumed.send({ type: 'user_approved_next_step' });
    expect(review.view).toMatchObject({ state: 'waiting_user.review_artifact', packageVersion: pinned, packageOnDisk: b.packageVersionOnDisk('tiny') });
    expect(systemPrompt(model.calls[0])).toContain(OLD_PROMPT);

    const upgraded = await b.upgradeSession(session.id);
    expect(upgraded).toMatchObject({ from: pinned, to: b.packageVersionOnDisk('tiny'), changed: true });
    expect((await storeB.journal(session.id)).at(-1)).toMatchObject({ type: 'package_upgraded', payload: { from: pinned, to: upgraded.to } });
    await resumed.send({ type: 'user_rejected_artifact', artifactId: review.view.artifact!.id });
    await resumed.send({ type: 'user_submitted_input', text: 'Shorter.' });
    expect(systemPrompt(model.calls[1])).toContain(NEW_PROMPT);
    await resumed.close();
  });

  it('two servers on one database: the same POST with one Idempotency-Key appends one journal entry; another event with the key is a 422', async () => {
    const url = await pg.createDatabase();
    let calls = 0;
    const server = async () => {
      const store = open(url);
      const scripted = new ScriptedModel([{ agent: 'manager', toolCalls: [scriptedCall('ask_user', { message: 'Which coast?' })] }]);
      const model = { label: 'scripted', complete: (request: Parameters<ScriptedModel['complete']>[0]) => ((calls += 1), scripted.complete(request)) };
      const handle = await startServe({ runtime: createRuntime({ model, store }), store, port: 0, log: () => {} });
      cleanups.push(() => handle.close());
      return { store, http: client(handle.url) };
    };
    const [one, two] = [await server(), await server()];
    const id: string = (await one.http.post('/sessions', { packageId: 'tiny' })).body.view.id;
    const event = { type: 'user_submitted_input', text: 'A ghost story.' };
    const key = { 'idempotency-key': '0b7c6f1e-9d1a-4c55-8f0e-2f3c1a9b7d10' };

    const first = await one.http.post(`/sessions/${id}/events`, event, key);
    expect(first.status).toBe(200);
    const entries = (await one.store.journal(id)).length;
    const retry = await two.http.post(`/sessions/${id}/events`, event, key);
    expect(retry.status).toBe(200);
    expect(retry.body).toMatchObject({ ok: true, repeated: true, view: { state: first.body.view.state } });
    expect((await two.store.journal(id)).length).toBe(entries);
    expect(calls).toBe(1);

    const reused = await two.http.post(`/sessions/${id}/events`, { type: 'user_submitted_input', text: 'Another.' }, key);
    expect(reused.status).toBe(422);
    expect(reused.body.error.code).toBe('idempotency_key_reused');
    const bad = await one.http.post(`/sessions/${id}/events`, event, { 'idempotency-key': 'not a key' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('Idempotency-Key');
    expect((await one.store.journal(id)).length).toBe(entries);
  });
});
