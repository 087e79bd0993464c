/**
 * Versioned snapshots with samples: test/fixtures/snapshots/v<N>.json holds a persisted
 * session of each snapshot schema version (made by test/support/snapshot-fixture.ts). Each
 * must load with `restoreSession` / `resumeSession` and continue to the end; and a session
 * persisted today must have the shape of the current version's sample — so a change of the
 * context's shape fails here until the schema version is bumped, a migration from the old
 * version is added and a new sample is written (the old ones stay and must still load).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createRuntime, MemoryStore } from '../../src/index.js';
import { scriptedCall, ScriptedModel } from '../../src/testing.js';
import { SNAPSHOT_SCHEMA_VERSION } from '../../src/runtime/persisted.js';
import { FIXTURE_SESSION_ID, fixturePath, makeFixtureSession } from '../support/snapshot-fixture.js';

const dir = fileURLToPath(new URL('../fixtures/snapshots/', import.meta.url));
const versions = readdirSync(dir)
  .map((f) => /^v(\d+)\.json$/.exec(f)?.[1])
  .filter((v) => v !== undefined)
  .map(Number)
  .sort((a, b) => a - b);
const load = (version: number): unknown => JSON.parse(readFileSync(fixturePath(version), 'utf8'));

/** The rest of the fixture's story: accept the artifact, the manager finishes. */
const continuation = () => new ScriptedModel([{ agent: 'manager', toolCalls: [scriptedCall('finish', { summary: 'The note is done.' })] }]);

/** Every path of the JSON with the type of its value (array items merged): the shape, not the data. */
function shape(value: unknown, path = '$', out = new Set<string>()): Set<string> {
  if (Array.isArray(value)) {
    out.add(`${path}: array`);
    for (const item of value) shape(item, `${path}[]`, out);
  } else if (value && typeof value === 'object') {
    out.add(`${path}: object`);
    // Keyed data (tags, answers, artifact tags) has user-chosen keys: its values' shape counts.
    const keyed = /\.(blackboard|tags|answers)$/.test(path);
    for (const [key, child] of Object.entries(value)) shape(child, keyed ? `${path}.*` : `${path}.${key}`, out);
  } else {
    out.add(`${path}: ${value === null ? 'null' : typeof value}`);
  }
  return out;
}

describe('persisted-session samples, one per snapshot schema version', () => {
  it(`the current version (v${SNAPSHOT_SCHEMA_VERSION}) has a sample, and every version up to it`, () => {
    expect(existsSync(fixturePath(SNAPSHOT_SCHEMA_VERSION)), 'write it with: node --import tsx test/support/snapshot-fixture.ts').toBe(true);
    expect(versions).toEqual(Array.from({ length: SNAPSHOT_SCHEMA_VERSION }, (_, i) => i + 1));
  });

  it.each(versions)('v%i loads with restoreSession and continues to the end', async (version) => {
    const runtime = createRuntime({ model: continuation() });
    const session = runtime.restoreSession(load(version));
    expect(session.view()).toMatchObject({
      id: FIXTURE_SESSION_ID,
      state: 'waiting_user.review_artifact',
      artifact: { id: 'a1', questions: [{ id: 'q1', text: 'Longer?' }] },
    });
    expect(session.view().rejections).toHaveLength(1);
    const result = await session.send({ type: 'user_accepted_artifact', artifactId: 'a1' });
    expect(result).toMatchObject({ ok: true, view: { phase: 'done', message: 'The note is done.' } });
  });

  it.each(versions)('v%i loads with resumeSession from a store and continues, journalled', async (version) => {
    const store = new MemoryStore();
    await store.create({
      id: FIXTURE_SESSION_ID,
      packageId: 'tiny',
      snapshot: load(version),
      entry: { kind: 'created', type: 'created', payload: {}, state: 'waiting_user.review_artifact' },
    });
    const runtime = createRuntime({ model: continuation(), store });
    const session = await runtime.resumeSession(FIXTURE_SESSION_ID);
    const result = await session.send({ type: 'user_accepted_artifact', artifactId: 'a1' });
    expect(result).toMatchObject({ ok: true, view: { phase: 'done' } });
    await session.close();
    expect((await store.journal(FIXTURE_SESSION_ID)).map((e) => e.type)).toEqual(['created', 'user_accepted_artifact', 'xstate.done.actor.managerTurn']);
  });

  it('a session persisted today has the shape of the current sample (else: bump the version, migrate, add a sample)', async () => {
    const today = shape(JSON.parse(JSON.stringify(await makeFixtureSession())));
    const sample = shape(load(SNAPSHOT_SCHEMA_VERSION));
    const added = [...today].filter((p) => !sample.has(p));
    const removed = [...sample].filter((p) => !today.has(p));
    expect(
      { added, removed },
      'The persisted shape changed: bump SNAPSHOT_SCHEMA_VERSION (src/runtime/persisted.ts), add a ' +
        'migration from the old version, and write the new sample with `node --import tsx ' +
        'test/support/snapshot-fixture.ts`.',
    ).toEqual({ added: [], removed: [] });
  });
});
