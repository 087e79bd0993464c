// (d) Steward (a statechart runtime for human-in-the-loop agent teams, on XState v5),
// driven only through its public API (src/index.ts of the Steward checkout).
//
//   npm run bench:peers        (from the Steward checkout: installs this folder, runs all variants)
//
// STEWARD_DIR is the Steward checkout (default: the one this folder is in, ../..). Its
// TypeScript sources are loaded with tsx: through the `--import .../tsx/dist/loader.mjs` hook
// when it is registered (what `npm run bench:peers` does), else through tsx's tsImport() API.
//
// Mapping of the scenario onto Steward:
// - The model implements Steward's Model interface (complete(request)). It counts the
//   `role: 'tool'` messages in request.messages (the prompt Steward assembled for the round)
//   and calls the harness's nextStep(count). Translation: read_key({key}) ->
//   read_blackboard({tags:[key]}); ask_user({question}) -> ask_user({message: question});
//   final -> finish({summary: 'done'}) (plain manager text would become an ask_user in
//   Steward, so the final step has to be the finish tool). The scenario's 19-call session
//   keeps ~40 messages, inside Steward's transcript window (60 messages), so the prompt holds
//   every tool result, as the model's count needs.
// - The blackboard holds the harness's 16 keys (BLACKBOARD) as tags k0..k15, seeded with
//   `runtime.createSession({ packageId, id, blackboard })` (each is version 1, by "app").
// - Hot mode: start = createSession + session.send(user_submitted_input USER_TEXT); the answer
//   is session.send({type: 'user_submitted_input', text: answer}) (the event the
//   `waiting_user.intake` wait accepts after an ask_user clarification).
// - Durable mode (this file): serialize = JSON.stringify(session.persisted()) + session.stop();
//   restore = runtime.restoreSession(JSON.parse(str)) (zod-validated envelope, createActor).
// - toolResults: from `session.transcript('manager')` (the whole transcript: the archive plus
//   the context's window). Steward's read_blackboard result text is "## k3 (v1, by app)\n<body>":
//   the body (= the harness value) is extracted. Steward's ask_user tool result is the fixed
//   text "Shown to the user; their reply follows."; the user's answer is the user message
//   that follows it, and that answer is what is reported. The finish call's result ("The
//   session is finished.") has no counterpart in the harness (its final step is plain text)
//   and is left out.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { nextStep, BLACKBOARD, MAX_BURST, USER_TEXT } from '../scenario.mjs';

export const STEWARD_DIR = resolve(process.env.STEWARD_DIR ?? join(dirname(fileURLToPath(import.meta.url)), '../../..'));

/** The public API (src/index.ts) of the Steward checkout in `dir`. */
export async function loadSteward(dir) {
  const src = join(dir, 'src/index.ts');
  try {
    return await import(pathToFileURL(src).href);
  } catch (error) {
    if (error?.code !== 'ERR_UNKNOWN_FILE_EXTENSION') throw error;
    const { tsImport } = await import(pathToFileURL(join(dir, 'node_modules/tsx/dist/esm/api/index.mjs')).href);
    return tsImport(pathToFileURL(src).href, import.meta.url);
  }
}
export const steward = await loadSteward(STEWARD_DIR);
const { SqliteStore } = steward;

export const PACKAGES_DIR = join(STEWARD_DIR, 'bench/packages');
export const PACKAGE_ID = 'bench';
export const WAIT_STATE = 'waiting_user.intake';
export const SEEDS = Object.fromEntries(BLACKBOARD);

const toolCall = (id, name, args) => ({ id, type: 'function', function: { name, arguments: JSON.stringify(args) } });

/** Steward's Model: a pure function of the tool results in the prompt, via the harness's nextStep. */
/**
 * HarnessModel decides from the number of tool results in its prompt, so the prompt must hold
 * the whole session (40 messages), as the peers' prompts do; Steward's default window holds
 * about two bursts (30 messages).
 */
export const HARNESS_WINDOW = { messages: 60 };

export class HarnessModel {
  label = 'anchors-bench fake model';
  complete(request) {
    let n = 0;
    for (const m of request.messages) if (m.role === 'tool') n++;
    const s = nextStep(n);
    let call;
    if (s.kind === 'final') call = toolCall(`call_${n}`, 'finish', { summary: s.text });
    else if (s.name === 'read_key') call = toolCall(s.id, 'read_blackboard', { tags: [s.args.key] });
    else if (s.name === 'ask_user') call = toolCall(s.id, 'ask_user', { message: s.args.question });
    else throw new Error(`unknown step ${JSON.stringify(s)}`);
    return Promise.resolve({ content: null, toolCalls: [call] });
  }
}

/** A new session of the bench package, its blackboard seeded with k0..k15. */
export const openSeeded = (runtime, sid) => runtime.createSession({ packageId: PACKAGE_ID, id: sid, blackboard: SEEDS });

/** A send's result as a handle; anything but a wait in intake or done is an error. */
export function settled(sid, session, result) {
  if (!result.ok) throw new Error(`steward ${sid}: send refused: ${result.error.code}: ${result.error.message}`);
  const state = result.view.state;
  if (state !== WAIT_STATE && state !== 'done')
    throw new Error(`steward ${sid}: unexpected state ${state}${result.view.notice ? ` (${result.view.notice})` : ''}`);
  return { sid, session, done: state === 'done' };
}

const READ_RESULT = /^## (\S+) \(v\d+, by [^)]*\)\n([\s\S]*)$/;

/** The transcript in the harness's terms: [['read_key', value] x5, ['ask_user', answer]] x3. */
export async function toolResults(h) {
  return resultsOf(await h.session.transcript('manager'));
}

/** `msgs` (a manager transcript) in the harness's terms. */
export function resultsOf(msgs) {
  const names = new Map();
  const out = [];
  msgs.forEach((m, i) => {
    if (m.role === 'assistant') for (const c of m.tool_calls ?? []) names.set(c.id, c.function.name);
    if (m.role !== 'tool') return;
    const name = names.get(m.tool_call_id);
    if (name === 'read_blackboard') {
      const match = READ_RESULT.exec(m.content);
      out.push(['read_key', match ? match[2] : `unparsed: ${m.content}`]);
    } else if (name === 'ask_user') {
      const next = msgs[i + 1];
      out.push(['ask_user', next?.role === 'user' ? next.content : `no user message after ask_user (${m.content})`]);
    } else if (name !== 'finish') {
      out.push([name, m.content]);
    }
  });
  return out;
}

export const send = (session, text) => session.send({ type: 'user_submitted_input', text });

/** The hot/durable adapter on `api` (a checkout's public API), as variant `name`, with the package of `dir`. */
export function adapterOn(api, name, dir) {
  const runtime = api.createRuntime({ model: new HarnessModel(), packagesDir: join(dir, 'bench/packages'), maxBurst: MAX_BURST, window: HARNESS_WINDOW });
  return {
    name,
    runtime,
    async start(sid) {
      const session = await openSeeded(runtime, sid);
      return settled(sid, session, await send(session, USER_TEXT));
    },
    async resume(h, answer) {
      return settled(h.sid, h.session, await send(h.session, answer));
    },
    serialize(h) {
      const str = JSON.stringify(h.session.persisted());
      h.session.stop();
      return str;
    },
    async restore(sid, str) {
      return { sid, session: runtime.restoreSession(JSON.parse(str)), done: false };
    },
    persistedBytes(h) {
      return { bytes: Buffer.byteLength(JSON.stringify(h.session.persisted())) };
    },
    toolResults,
    dispose(h) {
      h.session.stop();
    },
  };
}

export const create = () => adapterOn(steward, 'steward', STEWARD_DIR);

/** A SqliteStore on a fresh temp file (for steward_sqlite and the scripts). */
export function tempSqliteStore(tag = 'anchors') {
  const dir = mkdtempSync(join(tmpdir(), `steward-${tag}-`));
  return new SqliteStore(join(dir, 'sessions.db'));
}
