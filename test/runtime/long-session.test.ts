/**
 * A session with a journal of 2,000+ events on SQLite: its snapshot stays bounded, resume
 * reads one bounded row (no journal, no archive), and still nothing is lost — `steward log`,
 * the inspector's timeline and time travel see every event, every tag version ever written
 * is readable after its body left the snapshot (also by the manager, with read_blackboard's
 * `version`), and the whole manager transcript is readable through `runtime.history()`.
 */
import { describe, expect, it } from 'vitest';
import { JournalReplayer } from '../../src/inspect/replay.js';
import { startInspector } from '../../src/inspect/server.js';
import { snapshotState } from '../../src/core/machines/refusals.js';
import type { ModelReply, ModelRequest } from '../../src/core/models/model.js';
import { createRuntime, SqliteStore } from '../../src/index.js';
import type { SessionStore, StoredSession } from '../../src/store.js';
import { buildPage } from '../inspect/page-build.js';
import { parseJson, runCli } from '../support/cli-process.js';
import { useTempDir } from '../support/temp.js';

const tmp = useTempDir('steward-long-');

/** Counts what the store hands out: rows and bytes of loaded snapshots, journal rows, archive rows. */
class CountingStore extends SqliteStore {
  loads = 0;
  loadedBytes = 0;
  journalRows = 0;
  archiveRows = 0;
  reset(): void {
    this.loads = this.loadedBytes = this.journalRows = this.archiveRows = 0;
  }
  override async load(id: string): Promise<StoredSession | undefined> {
    const s = await super.load(id);
    this.loads++;
    if (s) this.loadedBytes += Buffer.byteLength(JSON.stringify(s.snapshot));
    return s;
  }
  override async journal(...args: Parameters<SessionStore['journal']>) {
    const rows = await super.journal(...args);
    this.journalRows += rows.length;
    return rows;
  }
  override async archived(...args: Parameters<SessionStore['archived']>) {
    const rows = await super.archived(...args);
    this.archiveRows += rows.length;
    return rows;
  }
}

const NOTES = 12; // worker runs, each writing one version of `note`
const READS = 9; // manager rounds of read_blackboard per burst

const reply = (id: string, name: string, args: unknown): ModelReply => ({
  content: null,
  toolCalls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }],
});

/**
 * The model: cycles 1..NOTES run the echo worker (note v<i>) and the user accepts; then only
 * bursts of reads and an ask_user. It reads the state of the conversation from the prompt.
 */
class LongModel {
  readonly label = 'long-session model';
  calls = 0;
  phase: 'work' | 'read' | 'old' = 'work';
  note = 0;
  inBurst = 0;
  lastOldRead: string | undefined;
  async complete(request: ModelRequest): Promise<ModelReply> {
    const id = `c${++this.calls}`;
    if (request.agent === 'worker') return reply(id, 'submit', { outputs: { note: `note ${this.note}` } });
    if (this.phase === 'work') return reply(id, 'run_worker', { workerId: 'echo', reason: `Note ${this.note}.`, requiresApproval: false });
    if (this.phase === 'old') {
      const last = request.messages.at(-1)!;
      if (last.role === 'tool') {
        this.lastOldRead = last.content;
        this.phase = 'read';
        return reply(id, 'ask_user', { message: 'Read it.' });
      }
      return reply(id, 'read_blackboard', { tags: ['note'], version: 1 });
    }
    if (this.inBurst++ < READS) return reply(id, 'read_blackboard', { tags: ['note'] });
    this.inBurst = 0;
    return reply(id, 'ask_user', { message: 'More?' });
  }
}

describe('a session of 2,000 events', () => {
  it('resumes from a bounded row, and log, timeline, time travel and history still show everything', async () => {
    const db = tmp.path('long.db');
    const store = new CountingStore(db);
    const model = new LongModel();
    const runtime = createRuntime({ model, store, maxBurst: 12 });
    let session = await runtime.createSession({ packageId: 'tiny' });
    const id = session.id;

    // NOTES worker runs: each note version is superseded by the next one's acceptance.
    for (let i = 1; i <= NOTES; i++) {
      model.note = i;
      model.phase = 'work';
      const r = await session.send({ type: 'user_submitted_input', text: `Write note ${i}.` });
      expect(r.ok && r.view.waitingReason).toBe('review_artifact');
      model.phase = 'read';
      const accepted = await session.send({ type: 'user_accepted_artifact', artifactId: r.view.artifact!.id });
      expect(accepted.ok && accepted.view.waitingReason).toBe('input');
    }

    const sizes: { entries: number; bytes: number }[] = [];
    const resumeAndMeasure = async () => {
      store.reset();
      session = await runtime.resumeSession(id);
      const measured = { loads: store.loads, bytes: store.loadedBytes, journalRows: store.journalRows, archiveRows: store.archiveRows };
      sizes.push({ entries: (await store.journal(id)).length, bytes: measured.bytes });
      return measured;
    };

    let entries = (await store.journal(id)).length;
    let burst = 0;
    while (entries < 2000) {
      const r = await session.send({ type: 'user_submitted_input', text: `answer ${++burst}` });
      expect(r.ok && r.view.waitingReason).toBe('input');
      entries += 1 + READS + 1;
      if (burst === 20 || burst % 60 === 0) {
        const read = await resumeAndMeasure();
        // Resume reads the one session row: no journal row, no archive row.
        expect(read).toMatchObject({ loads: 1, journalRows: 0, archiveRows: 0 });
      }
    }
    // The manager reads note v1, whose body left the snapshot long ago: its turn fetches it.
    model.phase = 'old';
    expect((await session.send({ type: 'user_submitted_input', text: 'Show me the first note.' })).ok).toBe(true);
    expect(model.lastOldRead).toBe('## note (v1, by echo)\nnote 1');
    const last = await resumeAndMeasure();
    expect(last).toMatchObject({ loads: 1, journalRows: 0, archiveRows: 0 });

    const journal = await store.journal(id);
    expect(journal.length).toBeGreaterThanOrEqual(2000);
    // Bounded: the row read at 2,000 events is no bigger than at ~400 (the windows are full by then).
    const early = sizes[0]!;
    expect(early.entries).toBeLessThan(500);
    expect(last.bytes).toBeLessThanOrEqual(early.bytes * 1.1);
    const context = session.actorRef.getSnapshot().context;
    expect(context.transcripts.manager.messages.length).toBeLessThanOrEqual(context.transcripts.window.messages);
    expect(context.blackboard.note!.filter((v) => 'body' in v).map((v) => v.version)).toEqual([NOTES]);
    // The older versions are counted, not listed: the tag's list is bounded however many it has.
    expect(context.blackboard.note![0]).toEqual({
      archived: NOTES - 1,
      size: Array.from({ length: NOTES - 1 }, (_, i) => `note ${i + 1}`.length).reduce((a, b) => a + b, 0),
    });
    expect(context.blackboard.note).toHaveLength(2);

    // Every note version ever written is readable, from the live session and from the store.
    const history = await runtime.history(id);
    for (let v = 1; v <= NOTES; v++) {
      expect((await session.tagVersion('note', v))?.body).toBe(`note ${v}`);
      expect((await history.tagVersion('note', v))?.body).toBe(`note ${v}`);
    }
    expect((await history.tagVersions('note')).map((v) => v.body)).toEqual(Array.from({ length: NOTES }, (_, i) => `note ${i + 1}`));
    // The whole manager transcript: one user message per input and acceptance, every call answered.
    const transcript = await session.transcript('manager');
    expect(transcript.filter((m) => m.role === 'user')).toHaveLength(NOTES * 2 + burst + 1);
    expect(transcript.filter((m) => m.role === 'tool')).toHaveLength(transcript.filter((m) => m.role === 'assistant').length);
    expect(transcript.length).toBe(context.transcripts.manager.total);

    // Time travel replays all of it and lands on the live state.
    const replayer = new JournalReplayer(runtime);
    const point = replayer.at(id, journal, journal.length, context);
    expect(point.divergedAt).toBeUndefined();
    expect(snapshotState(point.snapshot)).toBe(journal.at(-1)!.state);
    expect(point.snapshot.context.transcripts).toEqual(context.transcripts);
    await session.close();

    // The inspector's timeline and `steward log` list every entry.
    // The page of the current sources (the repo's dist/ may be stale or missing).
    const inspector = await startInspector({ runtime, store, port: 0, sessionId: id, pageDir: await buildPage(), log: () => {} });
    try {
      // serve's journal route, in pages: `next` is the last seq of a full page.
      let seen = 0;
      for (let after: number | null = 0; after !== null;) {
        const res = await fetch(`${new URL(inspector.url).origin}/api/sessions/${id}/journal?after=${after}&limit=1000`, {
          headers: { 'x-steward-token': inspector.token },
        });
        const page = (await res.json()) as { entries: unknown[]; next: number | null };
        seen += page.entries.length;
        after = page.next;
      }
      expect(seen).toBe(journal.length);
    } finally {
      await inspector.close();
    }
    await store.close();
    const log = await runCli(['log', id, '--json'], { db });
    expect(parseJson<unknown[]>(log)).toHaveLength(journal.length);
  }, 120_000);
});
