import { describe, expect, it } from 'vitest';
import { moveArtifact, type Artifact } from '../../src/core/blackboard/artifacts.js';
import { InternalError } from '../../src/core/errors.js';
import type { SessionContext } from '../../src/core/machines/session.context.js';
import { boundaryOf } from '../../src/core/machines/session.updates.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { runLoopTool } from '../../src/core/tools/loop-tools.js';

// A bug in Steward surfaces as an InternalError (code internal_error, "please report it"),
// not as a plain Error a caller cannot tell from its own.
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('a bug in Steward is an InternalError', () => {
  it('boundaryOf a call that is no boundary tool', () => {
    const error = thrown(() =>
      boundaryOf({} as SessionContext, { call: { id: 'c1', type: 'function', function: { name: 'list_workers', arguments: '{}' } }, args: {} }),
    );
    expect(InternalError.isInstance(error)).toBe(true);
    expect((error as InternalError).message).toMatch(/"list_workers" is not a manager boundary tool.*bug in Steward/);
  });

  it('runLoopTool of a tool that is no loop tool', () => {
    const error = thrown(() => runLoopTool('finish', {}, { blackboard: {}, workers: [], artifacts: [] }));
    expect(InternalError.isInstance(error)).toBe(true);
  });

  it('an illegal artifact move', () => {
    const artifact: Artifact = { id: 'a1', workerId: 'w', tags: {}, status: 'accepted' };
    const error = thrown(() => moveArtifact(artifact, 'rejected'));
    expect(InternalError.isInstance(error)).toBe(true);
    expect(artifact.status).toBe('accepted');
  });

  it('MemoryStore: an archive item written twice', async () => {
    const store = new MemoryStore();
    const item = { kind: 'message' as const, key: 'manager', n: 0, value: { role: 'user', content: 'x' } };
    await store.create({ id: 's1', packageId: null, snapshot: {}, entry: { kind: 'created', type: 'created', payload: {}, state: 'idle', added: [item] } });
    const error = await store.append({ id: 's1', expectedRevision: 1, entries: [], snapshot: {}, archive: [item] }).catch((e: unknown) => e);
    expect(InternalError.isInstance(error)).toBe(true);
  });
});
