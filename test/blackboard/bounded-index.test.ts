/**
 * The blackboard's index of old versions is bounded: a tag's list holds its latest version
 * (and versions under review), preceded by one summary counting the versions whose bodies
 * left the context — not an entry per old version. Every version stays readable through the
 * archive (the manager's read_blackboard, the worker's brief, history()).
 */
import { describe, expect, it } from 'vitest';
import {
  archivedVersions,
  blackboardIndex,
  hasVersion,
  latest,
  requestText,
  retainBodies,
  versionCount,
  versionOf,
  withVersion,
  type Blackboard,
  type TagVersion,
} from '../../src/core/blackboard/blackboard.js';
import type { Artifact } from '../../src/core/blackboard/artifacts.js';
import type { ModelReply, ModelRequest } from '../../src/core/models/model.js';
import { createRuntime, MemoryStore } from '../../src/index.js';

function write(board: Blackboard, tag: string, body: string, artifacts: readonly Artifact[] = []): Blackboard {
  return retainBodies(withVersion(board, tag, { body, writtenBy: 'user' }).board, artifacts);
}

describe('a tag written many times', () => {
  it('keeps one summary and its latest version; numbering, sizes and reads stay right', () => {
    let board: Blackboard = {};
    for (let i = 1; i <= 500; i++) board = write(board, 'request', `part ${i}`);
    const list = board.request!;
    const size = Array.from({ length: 499 }, (_, i) => `part ${i + 1}`.length).reduce((a, b) => a + b, 0);
    expect(list).toEqual([
      { archived: 499, size },
      { version: 500, body: 'part 500', writtenBy: 'user' },
    ]);
    expect(versionCount(board, 'request')).toBe(500);
    expect(latest(board, 'request')?.version).toBe(500);
    expect([hasVersion(board, 'request', 1), hasVersion(board, 'request', 500), hasVersion(board, 'request', 501), hasVersion(board, 'request', 0)]).toEqual([
      true,
      true,
      false,
      false,
    ]);
    expect(versionOf(board, 'request', 1)).toBeUndefined();
    expect(archivedVersions(board, 'request')).toEqual(Array.from({ length: 499 }, (_, i) => i + 1));
    // The index gives the whole request's size: every part and the blank lines between them.
    expect(blackboardIndex(board)[0]).toMatchObject({ tag: 'request', version: 500, size: size + 'part 500'.length + 2 * 499 });
    const fetched = Array.from({ length: 499 }, (_, i) => ({
      tag: 'request',
      version: { version: i + 1, body: `part ${i + 1}`, writtenBy: 'user' } as TagVersion,
    }));
    expect(requestText(board, fetched)).toBe(Array.from({ length: 500 }, (_, i) => `part ${i + 1}`).join('\n\n'));
    expect(requestText(board, fetched.slice(1))).toMatch(/^\(part 1 of the request could not be read from the archive\)\n\npart 2\n\n/);
  });

  it('keeps the bodies under review or rejected, after the summary, and archives them once they are done with', () => {
    let board: Blackboard = {};
    board = write(board, 'draft', 'd1');
    const review = (status: Artifact['status']): Artifact[] => [{ id: 'a1', workerId: 'w', tags: { draft: 1 }, status }];
    board = write(board, 'draft', 'd2', review('rejected'));
    board = write(board, 'draft', 'd3', review('rejected'));
    board = write(board, 'draft', 'd4', review('rejected'));
    expect(board.draft!.map((v) => ('body' in v ? v.body : v))).toEqual([{ archived: 2, size: 4 }, 'd1', 'd4']);
    const same = retainBodies(board, review('rejected'));
    expect(same).toBe(board);
    board = retainBodies(board, review('superseded'));
    expect(board.draft!.map((v) => ('body' in v ? v.body : v))).toEqual([{ archived: 3, size: 6 }, 'd4']);
    expect(withVersion(board, 'draft', { body: 'd5', writtenBy: 'w' }).version.version).toBe(5);
  });
});

/** Answers every intake with ask_user; reads the whole request when asked to. */
class IntakeModel {
  readonly label = 'intake model';
  calls = 0;
  readRequest = false;
  lastRead: string | undefined;
  async complete(request: ModelRequest): Promise<ModelReply> {
    const id = `c${++this.calls}`;
    const last = request.messages.at(-1)!;
    if (this.readRequest && last.role !== 'tool')
      return { content: null, toolCalls: [{ id, type: 'function', function: { name: 'read_blackboard', arguments: '{"tags":["request"]}' } }] };
    if (last.role === 'tool') this.lastRead = last.content;
    return { content: null, toolCalls: [{ id, type: 'function', function: { name: 'ask_user', arguments: '{"message":"And?"}' } }] };
  }
}

describe('a session whose request gets 200 parts', () => {
  it('has a snapshot no bigger than at 10 parts, and every part is still read and kept', async () => {
    const store = new MemoryStore();
    const model = new IntakeModel();
    const runtime = createRuntime({ model, store });
    const session = await runtime.createSession({ packageId: 'tiny' });
    const bytes: number[] = [];
    for (let i = 1; i <= 200; i++) {
      const r = await session.send({ type: 'user_submitted_input', text: `part ${i}` });
      expect(r.ok && r.view.waitingReason).toBe('intake');
      if (i === 10 || i === 200) bytes.push(Buffer.byteLength(JSON.stringify((await store.load(session.id))!.snapshot)));
    }
    // Both windows are full by part 10: what grows after it is only the part numbers' digits.
    expect(bytes[1]!).toBeLessThanOrEqual(bytes[0]! + 100);
    expect(session.actorRef.getSnapshot().context.blackboard.request).toHaveLength(2);
    model.readRequest = true;
    expect((await session.send({ type: 'user_submitted_input', text: 'part 201' })).ok).toBe(true);
    expect(model.lastRead).toBe(`## request (v1–v201, by user)\n${Array.from({ length: 201 }, (_, i) => `part ${i + 1}`).join('\n\n')}`);
    expect((await (await runtime.history(session.id)).tagVersions('request')).map((v) => v.body)).toEqual(
      Array.from({ length: 201 }, (_, i) => `part ${i + 1}`),
    );
    await session.close();
  });
});
