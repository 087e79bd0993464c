/**
 * Steward under the scenario: a runtime on the bench package (bench/packages/bench), the
 * fake model, and sessions that start with the blackboard seeded with k0..k15.
 *
 * Seeding. The blackboard is written only by the runtime (the user's request) and by worker
 * submits, so no user event can put k0..k15 on it, and the scenario's first input is fixed.
 * The honest way in is the one Steward itself uses to reopen a session: a persisted
 * snapshot. We let the runtime create a real session of the bench package (through
 * `createSession` on a throwaway MemoryStore), take the envelope it saved, and pre-fill its
 * `context.blackboard`. That template (kept as JSON, parsed anew for every session so no
 * two sessions share objects) is then opened:
 * - durable modes (MemoryStore, SqliteStore): `store.create()` with the template, then the
 *   public `runtime.resumeSession(id)`: zod-validated envelope, `createActor(machine,
 *   { snapshot })`, journal + snapshot written on every accepted event, as in production;
 * - hot mode (no store): the public `runtime.restoreSession(envelope)`: the same validation
 *   and restore as `resumeSession`, without a store (nothing journalled).
 *   Only the initial snapshot differs from a `createSession()` session.
 */
import { fileURLToPath } from 'node:url';
import { createRuntime, MemoryStore, type Session, type Runtime, type SendResult, type SessionContext, type SessionStore } from '../src/index.js';
import type { FakeModel } from './fake-model.js';
import { answerText, BURSTS, CALLS_PER_SESSION, FIRST_INPUT, MAX_BURST, seedTags, TAGS, verifyTranscript } from './scenario.js';
import type { SessionSamples } from './stats.js';

export type StewardMode = 'hot' | 'memory' | 'sqlite' | 'postgres';

export const PACKAGES_DIR = fileURLToPath(new URL('./packages', import.meta.url));
export const PACKAGE_ID = 'bench';
const SEED_AT = '2025-01-01T00:00:00.000Z';
const WAIT_STATE = 'waiting_user.intake'; // ask_user before the intake is confirmed: a clarification
/** Journal of a whole session: created + 4 user events + 19 manager turns. */
export const JOURNAL_PER_SESSION = 1 + (1 + BURSTS) + CALLS_PER_SESSION;

interface Envelope {
  schemaVersion: number;
  snapshot: { value: unknown; context: SessionContext };
}

/** The seeded envelope of a fresh bench-package session waiting in intake, as JSON. */
export async function seededTemplate(model: FakeModel): Promise<string> {
  const store = new MemoryStore();
  const runtime = createRuntime({ model, packagesDir: PACKAGES_DIR, maxBurst: MAX_BURST, store });
  const session = await runtime.createSession({ packageId: PACKAGE_ID, id: 'bench_template' });
  if (session.view().state !== WAIT_STATE) throw new Error(`template session is in ${session.view().state}, expected ${WAIT_STATE}`);
  session.stop();
  const stored = await store.load('bench_template');
  const envelope = stored!.snapshot as Envelope;
  envelope.snapshot.context.blackboard = Object.fromEntries(
    seedTags().map(([tag, body]) => [tag, [{ version: 1, body, writtenBy: 'seed', at: SEED_AT }]]),
  );
  return JSON.stringify(envelope);
}

export class StewardHarness {
  runtime!: Runtime;

  constructor(
    readonly model: FakeModel,
    readonly mode: StewardMode,
    public store: SessionStore | undefined,
    private readonly template: string,
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
    this.runtime = createRuntime({ model: this.model, packagesDir: PACKAGES_DIR, maxBurst: MAX_BURST, ...(store ? { store } : {}) });
  }

  envelopeFor(id: string): Envelope {
    const envelope = JSON.parse(this.template) as Envelope;
    envelope.snapshot.context.sessionId = id;
    return envelope;
  }

  /** A new session waiting in intake, blackboard seeded (see the file comment). */
  async open(id: string): Promise<Session> {
    const envelope = this.envelopeFor(id);
    if (!this.store) return this.runtime.restoreSession(envelope);
    await this.store.create({
      id,
      packageId: PACKAGE_ID,
      snapshot: envelope,
      entry: { kind: 'created', type: 'created', payload: { packageId: PACKAGE_ID, maxBurst: MAX_BURST, seededTags: TAGS }, state: WAIT_STATE },
    });
    return this.runtime.resumeSession(id);
  }
}

export function expectState(label: string, result: SendResult, state: string): void {
  if (!result.ok) throw new Error(`[${label}] send failed: ${result.error.code}: ${result.error.message}`);
  if (result.view.state !== state) throw new Error(`[${label}] expected state ${state}, got ${result.view.state}${result.view.notice ? ` (notice: ${result.view.notice})` : ''}`);
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
export async function runStewardSession(h: StewardHarness, id: string, options: { checkJournal?: boolean } = {}): Promise<SessionSamples> {
  const label = `steward ${h.mode}`;
  const durable = h.store !== undefined;
  const waitSeen: number[] = [];
  const resumeStart: number[] = [];
  h.model.begin();
  let session = await h.open(id);
  let result = await session.send({ type: 'user_submitted_input', text: FIRST_INPUT });
  for (let c = 0; c < BURSTS; c++) {
    waitSeen.push(performance.now());
    expectState(`${label} burst ${c + 1}`, result, WAIT_STATE);
    resumeStart.push(performance.now());
    if (durable) session = await h.runtime.resumeSession(id);
    result = await session.send({ type: 'user_submitted_input', text: answerText(c + 1) });
  }
  expectState(`${label} end`, result, 'done');
  const stamps = h.model.takeStamps();
  verifyTranscript(label, session.actorRef.getSnapshot().context.managerMessages, h.model.calls);
  if (durable && options.checkJournal) {
    const journal = await h.store!.journal(id);
    if (journal.length !== JOURNAL_PER_SESSION) throw new Error(`[${label}] journal holds ${journal.length} entries, expected ${JOURNAL_PER_SESSION}`);
    const stored = await h.store!.load(id);
    const context = (stored!.snapshot as Envelope).snapshot.context;
    verifyTranscript(`${label} (stored snapshot)`, context.managerMessages, CALLS_PER_SESSION);
  }
  return { stamps, waitSeen, resumeStart };
}
