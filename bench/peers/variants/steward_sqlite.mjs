// (d') Steward with a SqliteStore on a temp file: every accepted event (user event or
// model turn) is journalled, what it added archived and the session's bounded snapshot
// replaced, in one SQLite transaction, before send() resolves (so hot mode pays for
// persistence in every round, like LangGraph).
//
// - start: runtime.createSession({ packageId, id, blackboard }) (saved in the store at once),
//   then send(user_submitted_input USER_TEXT).
// - Durable mode: serialize = drop the live session (await session.close(): stops the actor,
//   waits for queued writes, of which there are none left once send() resolved); the
//   "string" handed back is the session id, since the state is already in SQLite.
//   restore = runtime.resumeSession(sid): SELECT + JSON.parse, zod validation of the
//   envelope, createActor({ snapshot }).start(), as a restarted process resumes.
// - persistedBytes: bytes of the snapshot JSON as SQLite stores it (sessions.snapshot), plus
//   the journal: entries and the bytes of their payload JSON.
// The store is opened lazily (run.mjs calls create() once just to read the name).
import { MAX_BURST, USER_TEXT } from '../scenario.mjs';
import { steward, HarnessModel, HARNESS_WINDOW, PACKAGES_DIR, openSeeded, settled, toolResults, send, tempSqliteStore } from './steward.mjs';

const { createRuntime } = steward;

export const create = () => {
  let store;
  let runtime;
  const rt = () => {
    if (!runtime) {
      store = tempSqliteStore('anchors');
      runtime = createRuntime({ model: new HarnessModel(), packagesDir: PACKAGES_DIR, maxBurst: MAX_BURST, window: HARNESS_WINDOW, store });
    }
    return runtime;
  };
  return {
    name: 'steward_sqlite',
    get runtime() {
      return rt();
    },
    get store() {
      rt();
      return store;
    },
    async start(sid) {
      const session = await openSeeded(rt(), sid);
      return settled(sid, session, await send(session, USER_TEXT));
    },
    async resume(h, answer) {
      return settled(h.sid, h.session, await send(h.session, answer));
    },
    async serialize(h) {
      await h.session.close();
      return h.sid;
    },
    async restore(sid, str) {
      return { sid, session: await rt().resumeSession(str), done: false };
    },
    async persistedBytes(h) {
      const stored = await store.load(h.sid);
      const journal = await store.journal(h.sid);
      return {
        bytes: Buffer.byteLength(JSON.stringify(stored.snapshot)),
        journalEntries: journal.length,
        journalPayloadBytes: journal.reduce((n, e) => n + Buffer.byteLength(JSON.stringify(e.payload)), 0),
      };
    },
    toolResults,
    dispose(h) {
      h.session.stop();
    },
  };
};
