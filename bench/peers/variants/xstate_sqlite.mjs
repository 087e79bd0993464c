// (a') Raw XState v5 plus a durable SQLite write, for the durable rows' floor: the same machine as
// variants/xstate.mjs, and every snapshot change written to one SQLite row per session with
// better-sqlite3 (WAL): synchronous=NORMAL for the commits inside a burst, FULL (an fsync) for the
// commit that ends a burst at a wait or the end, which is the durability Steward's default gives
// ("acknowledged"). What Steward's SQLite variant costs beyond this is Steward, not the disk.
//
// better-sqlite3 comes from the Steward checkout (STEWARD_DIR, default ../..), the same build
// Steward's SqliteStore uses, so the two SQLite rows differ by Steward's work, not the driver.
import { mkdtempSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createActor } from 'xstate';
import { USER_TEXT } from '../scenario.mjs';
import { create as createXState, machine, settled } from './xstate.mjs';
import { STEWARD_DIR } from './steward.mjs';

const Database = createRequire(join(STEWARD_DIR, 'package.json'))('better-sqlite3');

export const create = () => {
  const base = createXState();
  const db = new Database(join(mkdtempSync(join(tmpdir(), 'anchors-xstate-sqlite-')), 'floor.db'));
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, rev INTEGER NOT NULL, snapshot TEXT NOT NULL)');
  const put = db.prepare('INSERT INTO sessions (id, rev, snapshot) VALUES (?, 1, ?) ON CONFLICT(id) DO UPDATE SET rev = rev + 1, snapshot = excluded.snapshot');
  const get = db.prepare('SELECT snapshot FROM sessions WHERE id = ?');
  let level = '';
  const write = (sid, snap) => {
    const wait = snap.value === 'waiting' || snap.status === 'done';
    const want = wait ? 'FULL' : 'NORMAL';
    if (level !== want) {
      db.pragma(`synchronous = ${want}`);
      level = want;
    }
    put.run(sid, JSON.stringify(snap));
  };
  // Every snapshot change is committed, as a durable runtime commits each event.
  const watched = (sid, actor) => {
    actor.subscribe(() => write(sid, actor.getPersistedSnapshot()));
    return actor;
  };
  return {
    ...base,
    name: 'xstate_sqlite',
    async start(sid) {
      const actor = watched(sid, createActor(machine, { input: { text: USER_TEXT }, id: sid }));
      return settled(actor.start());
    },
    async resume(h, answer) {
      return base.resume(h, answer);
    },
    serialize(h) {
      const sid = h.actor.id;
      h.actor.stop();
      return sid;
    },
    async restore(sid, key) {
      const { snapshot } = get.get(key);
      return settled(watched(sid, createActor(machine, { snapshot: JSON.parse(snapshot), id: sid })).start()).then((h) => ({ ...h, done: false }));
    },
  };
};
