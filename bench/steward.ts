/**
 * Steward under the scenario: a runtime on the bench package (bench/packages/bench), the
 * fake model, and sessions that start with the blackboard seeded with k0..k15 through the
 * public API: `runtime.createSession({ packageId, blackboard })` (each seeded tag is version
 * 1, written by "app").
 * - durable modes (MemoryStore, SqliteStore): the session is created in the store; at every
 *   wait it is dropped and reopened with `runtime.resumeSession(id)`: zod-validated
 *   envelope, `createActor(machine, { snapshot })`, journal + snapshot + archive written on
 *   every accepted event, as in production;
 * - hot mode (no store): the live session answers directly (nothing journalled).
 */
import { fileURLToPath } from 'node:url';
import { createRuntime, type Session, type Runtime, type SendResult } from '../src/index.js';
import type { SessionStore } from '../src/store.js';
import type { FakeModel } from './fake-model.js';
import { answerText, BURSTS, CALLS_PER_SESSION, FIRST_INPUT, MAX_BURST, SCENARIO_WINDOW, seedTags, verifyTranscript } from './scenario.js';
import type { SessionSamples } from './stats.js';

export type StewardMode = 'hot' | 'memory' | 'sqlite' | 'postgres';

export const PACKAGES_DIR = fileURLToPath(new URL('./packages', import.meta.url));
export const PACKAGE_ID = 'bench';
const WAIT_STATE = 'waiting_user.intake'; // ask_user before the intake is confirmed: a clarification
/** Journal of a whole session: created + 4 user events + 19 manager turns. */
export const JOURNAL_PER_SESSION = 1 + (1 + BURSTS) + CALLS_PER_SESSION;
const SEEDS = Object.fromEntries(seedTags());

export class StewardHarness {
  runtime!: Runtime;

  constructor(
    readonly model: FakeModel,
    readonly mode: StewardMode,
    public store: SessionStore | undefined,
  ) {
    if ((mode === 'hot') !== (store === undefined)) throw new Error(`mode ${mode} ${store ? 'takes no store' : 'needs a store'}`);
    this.renew();
  }

  /**
   * A fresh runtime (same model and package; same store unless another is given). The
   * runtime keeps every session it opened in `runtime.live`, forever; the bench renews it
   * per block so that this growth does not pile up over the run (see the `live` figure).
   */
  renew(store: SessionStore | undefined = this.store): void {
    this.store = store;
    this.runtime = createRuntime({ model: this.model, packagesDir: PACKAGES_DIR, maxBurst: MAX_BURST, window: SCENARIO_WINDOW, ...(store ? { store } : {}) });
  }

  /** A new session waiting in intake, blackboard seeded (see the file comment). */
  async open(id: string): Promise<Session> {
    const session = await this.runtime.createSession({ packageId: PACKAGE_ID, id, blackboard: SEEDS });
    if (session.view().state !== WAIT_STATE) throw new Error(`new session is in ${session.view().state}, expected ${WAIT_STATE}`);
    return session;
  }
}

export function expectState(label: string, result: SendResult, state: string): void {
  if (!result.ok) throw new Error(`[${label}] send failed: ${result.error.code}: ${result.error.message}`);
  if (result.view.state !== state)
    throw new Error(`[${label}] expected state ${state}, got ${result.view.state}${result.view.notice ? ` (notice: ${result.view.notice})` : ''}`);
}

/** Runs one session to its first wait (for the memory figure). */
export async function startStewardSession(h: StewardHarness, id: string): Promise<Session> {
  h.model.begin();
  const session = await h.open(id);
  expectState(`steward ${h.mode}`, await session.send({ type: 'user_submitted_input', text: FIRST_INPUT }), WAIT_STATE);
  return session;
}

/**
 * One whole session. Durable modes: at every wait the session (already persisted by
 * Steward before `send()` resolved) is dropped and reopened from the store with
 * `runtime.resumeSession(id)` (which stops the old live session) before the answer is sent.
 */
export async function runStewardSession(
  h: StewardHarness,
  id: string,
  options: { checkJournal?: boolean; onOpen?: (session: Session) => unknown } = {},
): Promise<SessionSamples> {
  const label = `steward ${h.mode}`;
  const durable = h.store !== undefined;
  const waitSeen: number[] = [];
  const resumeStart: number[] = [];
  h.model.begin();
  let session = await h.open(id);
  options.onOpen?.(session);
  let result = await session.send({ type: 'user_submitted_input', text: FIRST_INPUT });
  for (let c = 0; c < BURSTS; c++) {
    waitSeen.push(performance.now());
    expectState(`${label} burst ${c + 1}`, result, WAIT_STATE);
    resumeStart.push(performance.now());
    if (durable) {
      session = await h.runtime.resumeSession(id);
      options.onOpen?.(session);
    }
    result = await session.send({ type: 'user_submitted_input', text: answerText(c + 1) });
  }
  expectState(`${label} end`, result, 'done');
  const stamps = h.model.takeStamps();
  verifyTranscript(label, await session.transcript('manager'), h.model.calls);
  if (durable && options.checkJournal) {
    const journal = await h.store!.journal(id);
    if (journal.length !== JOURNAL_PER_SESSION) throw new Error(`[${label}] journal holds ${journal.length} entries, expected ${JOURNAL_PER_SESSION}`);
    // What the store holds (the archive and the snapshot's window), read as another process would.
    const stored = await h.runtime.history(id);
    verifyTranscript(`${label} (stored history)`, await stored.transcript('manager'), CALLS_PER_SESSION);
  }
  return { stamps, waitSeen, resumeStart };
}
