/**
 * Tag names are data: names that Object.prototype also has ("__proto__", "constructor",
 * "toString", "hasOwnProperty") are ordinary tags from the loader through worker submits,
 * read_blackboard, the view and a persistence round trip. A tag `constructor` once found
 * `Object` on the board and killed the session ("versions is not iterable").
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRuntime, SqliteStore } from '../../src/index.js';
import { scriptedCall, ScriptedModel } from '../../src/testing.js';
import type { Session, SessionView, UserEvent } from '../../src/index.js';
import { latest, versionOf, withVersion, type Blackboard } from '../../src/core/blackboard/blackboard.js';
import { loadPackage } from '../../src/skills/index.js';

const PROTO_NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty'];
const prototypeKeys = () => Object.getOwnPropertyNames(Object.prototype).sort();
const before = prototypeKeys();

function worker(id: string, inputTags: string[], outputTags: string[]): string {
  return (
    `---\nid: ${id}\ntitle: ${id}\ndescription: Writes ${outputTags.join(', ')}.\ninputTags: ` +
    `${JSON.stringify(inputTags)}\noutputTags: ${JSON.stringify(outputTags)}\n---\nYou are ${id}. Finish ` +
    `by calling submit.\n`
  );
}

async function step(session: Session, event: UserEvent): Promise<SessionView> {
  const result = await session.send(event);
  if (!result.ok) throw new Error(`${event.type} was refused: ${result.error.message}`);
  return result.view;
}

describe('tag names that Object.prototype also has', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'steward-proto-'));
    const write = (path: string, text: string) => {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    };
    write(
      'proto/manifest.json',
      JSON.stringify({ schemaVersion: 1, id: 'proto', title: 'Proto', description: 'Tags named like Object.prototype members.', workers: ['maker', 'reader'] }),
    );
    write('proto/workers/maker.md', worker('maker', ['request'], ['constructor', '__proto__', 'toString']));
    write('proto/workers/reader.md', worker('reader', ['constructor', '__proto__', 'toString'], ['hasOwnProperty']));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('the loader accepts them as ordinary tags and checks the chain with them', () => {
    const pkg = loadPackage(join(root, 'proto'));
    expect(pkg.workers.map((w) => [w.inputTags, w.outputTags])).toEqual([
      [['request'], ['constructor', '__proto__', 'toString']],
      [['constructor', '__proto__', 'toString'], ['hasOwnProperty']],
    ]);
    expect(prototypeKeys()).toEqual(before);
  });

  it('the board keeps them as own keys and never reads the prototype chain', () => {
    let board: Blackboard = {};
    for (const tag of PROTO_NAMES) expect(latest(board, tag), tag).toBeUndefined();
    expect(() => withVersion(board, 'constructor', { body: 'c', writtenBy: 'w', at: 'now' })).not.toThrow();
    for (const tag of PROTO_NAMES) board = withVersion(board, tag, { body: `body of ${tag}`, writtenBy: 'w', at: 'now' }).board;
    board = withVersion(board, '__proto__', { body: 'second', writtenBy: 'w', at: 'now' }).board;
    expect(Object.keys(board)).toEqual(PROTO_NAMES);
    expect(latest(board, '__proto__')?.body).toBe('second');
    expect(versionOf(board, '__proto__', 1)?.body).toBe('body of __proto__');
    const restored = JSON.parse(JSON.stringify(board)) as Blackboard; // as persisted
    for (const tag of PROTO_NAMES) expect(latest(restored, tag)?.version, tag).toBe(tag === '__proto__' ? 2 : 1);
    expect(latest(restored, 'valueOf')).toBeUndefined();
    expect(prototypeKeys()).toEqual(before);
  });

  it('a package with tags constructor and __proto__ runs a story to done, and survives a persistence round trip', async () => {
    const model = new ScriptedModel([
      { agent: 'manager', toolCalls: [scriptedCall('run_worker', { workerId: 'maker', reason: 'Make them.', requiresApproval: false })] },
      // zod's z.record skipped a "__proto__" key unchecked, and the raw arguments were published: an object body.
      {
        agent: 'worker',
        toolCalls: [
          scriptedCall('submit', {
            outputs: JSON.parse('{"constructor": "C body", "__proto__": {"polluted": true}, "toString": "T body"}') as Record<string, string>,
          }),
        ],
      },
      {
        agent: 'worker',
        toolCalls: [
          scriptedCall('submit', { outputs: JSON.parse('{"constructor": "C body", "__proto__": "P body", "toString": "T body"}') as Record<string, string> }),
        ],
      },
      {
        agent: 'manager',
        toolCalls: [
          scriptedCall('read_blackboard', { tags: ['constructor', '__proto__', 'toString', 'valueOf'] }),
          scriptedCall('run_worker', { workerId: 'reader', reason: 'Read them.', requiresApproval: false }),
        ],
      },
      { agent: 'worker', toolCalls: [scriptedCall('submit', { outputs: JSON.parse('{"hasOwnProperty": "H body"}') as Record<string, string> })] },
      { agent: 'manager', toolCalls: [scriptedCall('finish', { summary: 'All four written.' })] },
    ]);
    const store = new SqliteStore(join(root, 's.db'));
    try {
      const runtime = createRuntime({ model, packagesDir: root, store });
      const session = await runtime.createSession({ packageId: 'proto' });
      let view = await step(session, { type: 'user_submitted_input', text: 'Write the four tags.' });
      expect(view.waitingReason).toBe('review_artifact');
      expect(view.artifact?.tags.map((t) => [t.tag, t.version, t.body])).toEqual([
        ['constructor', 1, 'C body'],
        ['__proto__', 1, 'P body'],
        ['toString', 1, 'T body'],
      ]);

      // A fresh runtime reads the session back from the database: the tags are still there.
      const reopened = await createRuntime({ model, packagesDir: root, store }).resumeSession(session.id);
      view = reopened.view();
      expect(view.blackboard.map((b) => b.tag)).toEqual(['request', 'constructor', '__proto__', 'toString']);
      view = await step(reopened, { type: 'user_accepted_artifact', artifactId: 'a1' });

      const workerResults = (await session.transcript('worker')).filter((m) => m.role === 'tool').map((m) => String(m.content));
      expect(workerResults[0]).toMatch(/^Error: Invalid arguments for submit: outputs\.__proto__: .*expected string/);

      // read_blackboard returned the bodies, and an unknown prototype name is just unknown.
      const toolResults = (await reopened.transcript('manager')).filter((m) => m.role === 'tool').map((m) => String(m.content));
      const read = toolResults.find((c) => c.includes('## constructor'))!;
      expect(read).toContain('## constructor (v1, by maker)\nC body');
      expect(read).toContain('## __proto__ (v1, by maker)\nP body');
      expect(read).toContain('## toString (v1, by maker)\nT body');
      expect(read).toMatch(/## valueOf\n\(no such tag/);
      // The reader worker got the three bodies in its context.
      const readerRequest = model.calls.find((r) => r.messages.some((m) => String(m.content).includes('You are reader')))!;
      expect(readerRequest.messages.map((m) => String(m.content)).join('\n')).toContain('P body');

      expect(view.waitingReason).toBe('review_artifact');
      view = await step(reopened, { type: 'user_accepted_artifact', artifactId: 'a2' });
      expect(view.state).toBe('done');
      expect(view.blackboard.map((b) => b.tag)).toEqual(['request', 'constructor', '__proto__', 'toString', 'hasOwnProperty']);
      model.assertComplete();
    } finally {
      await store.close();
    }
    expect(prototypeKeys()).toEqual(before);
    expect(({} as Record<string, unknown>).constructor).toBe(Object);
  });
});
