// Growth of a long Steward session: BURSTS_LONG (default 60) bursts of K read_blackboard
// rounds + one ask_user, answered each time; then finish. Not a run.mjs variant: run it as
//   node --expose-gc --import $STEWARD_DIR/node_modules/tsx/dist/loader.mjs variants/steward_growth.mjs
// (Steward's own `npm run bench` prints the same figures in its growth section.)
//
// The model: the same mapping as variants/steward.mjs, but the harness's nextStep() knows only
// BURSTS = 3, and Steward's prompt holds a bounded window of the transcript (cut between
// groups, not only at user messages), so the step is the model's own count of calls since
// the driver's last answer; the burst number is the number of answers the driver has sent.
// The whole transcript (session.transcript('manager'): archive + window) is checked at the
// end of every session.
import { performance } from 'node:perf_hooks';
import { K, BLACKBOARD, MAX_BURST, USER_TEXT, setRecorder } from '../scenario.mjs';
import { steward, PACKAGES_DIR, WAIT_STATE, openSeeded, tempSqliteStore } from './steward.mjs';

const { createRuntime } = steward;
const N = Number(process.env.BURSTS_LONG ?? 60);
const SESSIONS = Number(process.env.GROWTH_SESSIONS ?? 30);
const HELD = Number(process.env.GROWTH_HELD ?? 50);
const POINTS = [1, 10, 30, 60].filter((b) => b <= N);
const answerOf = (b) => `answer-${b}: yes, go ahead`;
setRecorder(null);

const call = (id, name, args) => ({ id, type: 'function', function: { name, arguments: JSON.stringify(args) } });
class GrowthModel {
  label = 'growth fake model';
  answers = 0; // set by the driver: answers sent so far in the session being driven
  inBurst = 0; // calls since the driver's last answer (reset by the driver)
  stamps = []; // entry time of every call
  promptBytes = []; // bytes of JSON.stringify(request.messages), only when sizing
  sizing = false;
  complete(request) {
    this.stamps.push(performance.now());
    if (this.sizing) this.promptBytes.push(Buffer.byteLength(JSON.stringify(request.messages)));
    const p = this.inBurst++;
    const b = this.answers; // 0-based burst index
    let c;
    if (b >= N) c = call(`call_fin`, 'finish', { summary: 'done' });
    else if (p < K) c = call(`call_${b}_${p}`, 'read_blackboard', { tags: [`k${(b * K + p) % 16}`] });
    else c = call(`call_${b}_${p}`, 'ask_user', { message: `May I proceed with step ${b}?` });
    return Promise.resolve({ content: null, toolCalls: [c] });
  }
}

async function check(session) {
  const msgs = await session.transcript('manager');
  const tools = msgs.filter((m) => m.role === 'tool');
  if (tools.length !== N * (K + 1) + 1) throw new Error(`transcript has ${tools.length} tool results`);
  for (let b = 0; b < N; b++)
    for (let p = 0; p < K; p++) {
      const t = tools[b * (K + 1) + p];
      const key = `k${(b * K + p) % 16}`;
      if (!t.content.endsWith(`\n${BLACKBOARD.get(key)}`) || t.tool_call_id !== `call_${b}_${p}`) throw new Error(`bad result ${b}/${p}: ${t.content}`);
    }
  const users = msgs.filter((m) => m.role === 'user').map((m) => m.content);
  if (users.length !== N + 1 || users[N] !== answerOf(N - 1)) throw new Error(`user messages: ${users.length}`);
}

const med = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const us = (ms) => Math.round(ms * 10000) / 10;
const gc = async () => {
  for (let i = 0; i < 4; i++) {
    globalThis.gc();
    await new Promise((r) => setImmediate(r));
  }
};
const heap = () => {
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
};

function makeRuntime(withStore) {
  const model = new GrowthModel();
  const store = withStore ? tempSqliteStore('growth') : undefined;
  const runtime = createRuntime({ model, packagesDir: PACKAGES_DIR, maxBurst: MAX_BURST, ...(store ? { store } : {}) });
  // Time every store.append (JSON.stringify of the snapshot + the SQLite transaction).
  const appends = [];
  if (store) {
    const orig = store.append.bind(store);
    store.append = async (id, rev, entries, snap) => {
      const t = performance.now();
      const r = await orig(id, rev, entries, snap);
      appends.push({ ms: performance.now() - t, entries: entries.length, burst: model.answers });
      return r;
    };
  }
  return { model, store, runtime, appends };
}

const open = (env, sid) => openSeeded(env.runtime, sid);
const ok = (r, state) => {
  if (!r.ok || r.view.state !== state) throw new Error(`state ${r.view?.state} ${r.error?.message ?? ''}`);
};

/** One long session; per burst (1-based): the K round intervals, pause half, resume half. */
async function longSession(env, sid, hooks = {}) {
  const { model } = env;
  model.answers = 0;
  model.inBurst = 0;
  model.stamps = [];
  let session = await open(env, sid);
  let r = await session.send({ type: 'user_submitted_input', text: USER_TEXT });
  const perBurst = [];
  for (let b = 0; b < N; b++) {
    const tSeen = performance.now();
    ok(r, WAIT_STATE);
    const base = b * (K + 1);
    const st = model.stamps;
    const rounds = Array.from({ length: K }, (_, i) => st[base + i + 1] - st[base + i]);
    const pauseHalf = tSeen - st[base + K];
    if (hooks.atWait) session = (await hooks.atWait(b + 1, session)) ?? session;
    model.answers = b + 1;
    model.inBurst = 0;
    const tSend = performance.now();
    r = await session.send({ type: 'user_submitted_input', text: answerOf(b) });
    const resumeHalf = model.stamps[base + K + 1] - tSend;
    perBurst.push({ rounds, pauseHalf, resumeHalf });
  }
  ok(r, 'done');
  await check(session);
  session.stop();
  return perBurst;
}

const out = { N, SESSIONS, HELD, points: POINTS };
for (const mode of ['hot', 'sqlite']) {
  const env = makeRuntime(mode === 'sqlite');
  for (let i = 0; i < 3; i++) await longSession(env, `warm_${mode}_${i}`);
  // timing: SESSIONS long sessions
  const all = [];
  env.appends.length = 0;
  for (let i = 0; i < SESSIONS; i++) all.push(await longSession(env, `t_${mode}_${i}`));
  const appendsByBurst = new Map();
  for (const a of env.appends) {
    if (!appendsByBurst.has(a.burst)) appendsByBurst.set(a.burst, []);
    appendsByBurst.get(a.burst).push(a);
  }
  const timing = POINTS.map((b) => {
    const rounds = all.flatMap((s) => s[b - 1].rounds);
    const cycle = all.map((s) => s[b - 1].pauseHalf + s[b - 1].resumeHalf);
    // appends while burst b runs: model.answers === b - 1 during burst b (the answer that starts burst b+1 counts as b)
    const ap = appendsByBurst.get(b - 1) ?? [];
    return {
      burst: b,
      round_us: us(med(rounds)),
      pauseResume_us: us(med(cycle)),
      ...(env.store
        ? {
            append_us: us(med(ap.map((a) => a.ms))),
            appendsPerBurstPerSession: ap.length / SESSIONS,
            entriesPerAppend: ap.reduce((n, a) => n + a.entries, 0) / Math.max(1, ap.length),
          }
        : {}),
    };
  });
  // sizing: one session, prompt bytes + snapshot bytes + persisted() and resume cost at each wait
  env.model.sizing = true;
  env.model.promptBytes = [];
  const sizes = {};
  await longSession(env, `size_${mode}`, {
    async atWait(b, session) {
      if (!POINTS.includes(b)) return undefined;
      const ctx = session.actorRef.getSnapshot().context;
      const snap = JSON.stringify(session.persisted());
      const req = await session.tagVersions('request'); // every part, through the archive
      const tp = [];
      for (let i = 0; i < 50; i++) {
        const t = performance.now();
        JSON.stringify(session.persisted());
        tp.push(performance.now() - t);
      }
      const s = {
        promptBytes_askRound: env.model.promptBytes[b * (K + 1) - 1],
        contextManagerMessages: ctx.transcripts.manager.messages.length,
        contextRequestBytes: Buffer.byteLength(JSON.stringify(ctx.blackboard.request)),
        snapshotBytes: Buffer.byteLength(snap),
        requestTagVersions: req.length,
        requestTagBytesAllVersions: req.reduce((n, v) => n + v.body.length, 0),
        persistedPlusStringify_us: us(med(tp)),
      };
      if (env.store) {
        const rs = [];
        for (let i = 0; i < 20; i++) {
          const t = performance.now();
          session = await env.runtime.resumeSession(session.id);
          rs.push(performance.now() - t);
        }
        s.resumeSession_us = us(med(rs));
        s.journalEntries = (await env.store.journal(session.id)).length;
      } else {
        const rs = [];
        for (let i = 0; i < 20; i++) {
          const t = performance.now();
          const str = JSON.stringify(session.persisted());
          const n = env.runtime.restoreSession(JSON.parse(str));
          rs.push(performance.now() - t);
          n.stop();
        }
        s.serializeAndRestoreSession_us = us(med(rs));
      }
      sizes[b] = s;
      return session;
    },
  });
  env.model.sizing = false;
  // retained heap of one session at wait b: HELD sessions advanced together, Δ(heap+external)/HELD
  const held = [];
  await gc();
  const h0 = heap();
  const retained = {};
  for (let i = 0; i < HELD; i++) {
    const s = await open(env, `held_${mode}_${i}`);
    env.model.answers = 0;
    env.model.inBurst = 0;
    ok(await s.send({ type: 'user_submitted_input', text: USER_TEXT }), WAIT_STATE);
    held.push(s);
  }
  for (let b = 1; b <= N; b++) {
    if (POINTS.includes(b)) {
      await gc();
      retained[b] = Math.round((heap() - h0) / HELD);
    }
    if (b === N) break;
    env.model.answers = b;
    for (const s of held) {
      env.model.inBurst = 0;
      ok(await s.send({ type: 'user_submitted_input', text: answerOf(b - 1) }), WAIT_STATE);
    }
  }
  globalThis.__keep = held;
  held.length = 0;
  globalThis.__keep = null;
  if (env.store) {
    out.sqliteJournalMode = 'wal'; // SqliteStore sets journal_mode = WAL (its db handle is private)
  }
  out[mode] = POINTS.map((b) => ({ ...timing.find((t) => t.burst === b), ...sizes[b], retainedHeapPerSession_B: retained[b] }));
}
out.promptNote = 'promptBytes_askRound = bytes of JSON.stringify(request.messages) at the ask_user round of that burst (system prompt + compacted transcript)';
console.log(JSON.stringify(out, null, 2));
