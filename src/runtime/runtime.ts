/**
 * The public entry point: a runtime holds the model, the packages and the store, and
 * creates or resumes sessions.
 *
 * @example
 * const runtime = createRuntime({ model: new ScriptedModel([...]) });
 * const session = await runtime.createSession({ packageId: 'short-story' });
 * const result = await session.send({ type: 'user_submitted_input', text: 'A ghost story' });
 */
import { randomBytes } from 'node:crypto';
import { createActor, type InspectionEvent } from 'xstate';
import { createManagerTurn, createWorkerTurn } from '../agents/turns.js';
import { SessionNotFoundError, UserError } from '../errors.js';
import { DEFAULT_MAX_BURST, type PackageInfo } from '../machines/session.context.js';
import { sessionMachine, type SessionMachine } from '../machines/session.machine.js';
import { stateString } from '../machines/refusals.js';
import type { Model } from '../models/model.js';
import { resolveLimits, type Limits } from '../limits.js';
import { loadPackages, type SkillPackage } from '../skills/index.js';
import type { SessionStore, StoredSession } from '../store/session-store.js';
import { makeFork } from './fork.js';
import { packageInfoOf } from './journal-replay.js';
import { envelope, openEnvelope } from './persisted.js';
import { Session } from './session.js';

export interface RuntimeOptions {
  model: Model;
  /** LLM rounds allowed between two user actions (default 12). */
  maxBurst?: number;
  /**
   * Tokens (prompt + completion, as the model reports them) allowed per burst, between two
   * user actions; off by default. Checked before each model call (the guard
   * `burstTokensWithinBudget`); over it the session waits for the user with a notice.
   */
  maxBurstTokens?: number;
  /** Folder of skill packages (default: the bundled ones). */
  packagesDir?: string;
  /** Where sessions are saved; without one, sessions live in memory only. */
  store?: SessionStore;
  /** Receives XState inspection events of every session (see src/inspect). */
  inspect?: (event: InspectionEvent) => void;
  /** Size limits (src/limits.ts, DEFAULT_LIMITS); `userTextChars` can also be set per session. */
  limits?: Partial<Limits>;
}

export interface CreateSessionOptions {
  packageId?: string;
  maxBurst?: number;
  /** Tokens per burst for this session (default: the runtime's, off by default); null turns it off. */
  maxBurstTokens?: number | null;
  id?: string;
  limits?: Pick<Partial<Limits>, 'userTextChars'>;
}

export interface Runtime {
  readonly model: Model;
  readonly packages: ReadonlyMap<string, SkillPackage>;
  readonly machine: SessionMachine;
  readonly store: SessionStore | undefined;
  createSession(options?: CreateSessionOptions): Promise<Session>;
  /**
   * A new session whose state is this one's after journal entry `atSeq` (replayed through
   * the pure machine, as time travel does), with `forkedFrom` in its view and a first
   * journal entry "forked". The original is not touched; a model call in flight at that
   * point runs again in the fork.
   */
  forkSession(id: string, options: { atSeq: number; id?: string }): Promise<Session>;
  readonly limits: Readonly<Limits>;
  /** Reopens a saved session; a model call that was in flight runs again. */
  resumeSession(id: string, options?: { from?: StoredSession }): Promise<Session>;
  /**
   * A live, in-memory session from a persisted snapshot (`session.persisted()`) that the app
   * stored itself; nothing is journalled. Validated like a stored one.
   */
  restoreSession(persisted: unknown): Session;
  /** The live session with this id if this runtime holds it, else `resumeSession(id)`. */
  openSession(id: string): Promise<Session>;
  /** Sessions this runtime holds in memory. */
  readonly live: ReadonlyMap<string, Session>;
}

function checkMaxBurst(value: number | undefined, where: string): number {
  const n = value ?? DEFAULT_MAX_BURST;
  if (!Number.isInteger(n) || n < 1) throw new UserError(`${where}: maxBurst must be a whole number ≥ 1 (got ${String(value)}).`);
  return n;
}

function checkMaxBurstTokens(value: number | null | undefined, where: string): number | null {
  if (value === undefined || value === null) return null;
  if (!Number.isInteger(value) || value < 1) throw new UserError(`${where}: maxBurstTokens must be a whole number of tokens ≥ 1, or null for no budget (got ${String(value)}).`);
  return value;
}

export const packageInfo = packageInfoOf;

export function newSessionId(): string {
  return `s_${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
}

export function createRuntime(options: RuntimeOptions): Runtime {
  if (!options?.model || typeof options.model.complete !== 'function') {
    throw new UserError('createRuntime needs a model: pass { model } (an OpenAIModel, the demo model, or a ScriptedModel in tests).');
  }
  const maxBurst = checkMaxBurst(options.maxBurst, 'createRuntime');
  const maxBurstTokens = checkMaxBurstTokens(options.maxBurstTokens, 'createRuntime');
  const limits = resolveLimits(options.limits);
  const packages = loadPackages(options.packagesDir);
  const promptOf = (packageId: string, workerId: string) =>
    packages.get(packageId)?.workers.find((w) => w.id === workerId)?.prompt;
  // One PackageInfo per package, shared by every session of this runtime (and swapped into
  // restored snapshots when it matches), so sessions do not each carry a copy.
  const infos = new Map([...packages.values()].map((pkg) => [pkg.id, packageInfo(pkg)]));
  const infoJson = new Map([...infos.values()].map((info) => [info.id, JSON.stringify(info)]));
  const machine = sessionMachine.provide({
    actors: { managerTurn: createManagerTurn(options.model), workerTurn: createWorkerTurn(options.model, promptOf) },
  });
  const store = options.store;
  const live = new Map<string, Session>();

  async function createSession(opts: CreateSessionOptions = {}): Promise<Session> {
    // Per-session limits live with this Session object only (a resumed session has the runtime's).
    const sessionLimits = opts.limits ? resolveLimits({ ...limits, ...opts.limits }, 'createSession') : limits;
    let pkg: SkillPackage | undefined;
    if (opts.packageId !== undefined) {
      pkg = packages.get(opts.packageId);
      if (!pkg) throw new UserError(`Unknown package "${opts.packageId}". Packages: ${[...packages.keys()].join(', ')}.`);
    }
    const id = opts.id ?? newSessionId();
    const input = {
      sessionId: id,
      package: pkg ? infos.get(pkg.id)! : null,
      catalog: pkg ? [] : [...infos.values()],
      maxBurst: checkMaxBurst(opts.maxBurst ?? maxBurst, 'createSession'),
      maxBurstTokens: opts.maxBurstTokens === undefined ? maxBurstTokens : checkMaxBurstTokens(opts.maxBurstTokens, 'createSession'),
    };
    let persistence = null;
    if (store) {
      // Persist the initial snapshot before anything can happen to it.
      const probe = createActor(machine, { input });
      const snapshot = envelope(probe.getPersistedSnapshot());
      const state = stateString(probe.getSnapshot().value);
      const stored = await store.create({ id, packageId: pkg?.id ?? null, snapshot, entry: { kind: 'created', type: 'created', payload: { packageId: pkg?.id ?? null, maxBurst: input.maxBurst, ...(input.maxBurstTokens !== null ? { maxBurstTokens: input.maxBurstTokens } : {}) }, state } });
      persistence = { store, revision: stored.revision };
    }
    return track((onEnd) => new Session(id, (inspect) => createActor(machine, { input, ...(inspect ? { inspect } : {}) }).start(), persistence, options.inspect, onEnd, sessionLimits));
  }

  /** `from`: the stored session the caller already loaded and checked (no second read that could differ). */
  async function resumeSession(id: string, resumeOptions: { from?: StoredSession } = {}): Promise<Session> {
    if (!store) throw new UserError('resumeSession needs a store: createRuntime({ model, store }).');
    // Let a live copy finish its queued writes first, or they would race this one's first write.
    await live.get(id)?.close();
    const stored = resumeOptions.from ?? (await store.load(id));
    if (!stored) throw new SessionNotFoundError(id);
    return track((onEnd) => restore(id, stored.snapshot, { store, revision: stored.revision }, onEnd));
  }

  function restore(id: string, persisted: unknown, persistence: { store: SessionStore; revision: number } | null, onEnd?: () => void): Session {
    const snapshot = openEnvelope(id, persisted) as { context: { package: PackageInfo | null } };
    const pkg = snapshot.context.package;
    if (pkg && infoJson.get(pkg.id) === JSON.stringify(pkg)) snapshot.context.package = infos.get(pkg.id)!;
    return new Session(
      id,
      (inspect) => createActor(machine, { snapshot: snapshot as never, input: { sessionId: id }, ...(inspect ? { inspect } : {}) }).start(),
      persistence,
      options.inspect,
      onEnd,
      limits,
    );
  }

  function restoreSession(persisted: unknown): Session {
    const id = (persisted as { snapshot?: { context?: { sessionId?: unknown } } } | null)?.snapshot?.context?.sessionId;
    // Not tracked in `live`: with no store there is nothing to open by id later.
    return restore(typeof id === 'string' ? id : '(unknown)', persisted, null);
  }

  /** Holds a session while it is live; a done, stopped or failed one is let go. */
  function track(make: (onEnd: () => void) => Session): Session {
    let ended = false;
    let session: Session | undefined;
    // onEnd may run inside make() already: a restored session that is done ends at once.
    session = make(() => {
      ended = true;
      if (session && live.get(session.id) === session) live.delete(session.id);
    });
    if (!ended) live.set(session.id, session);
    return session;
  }

  async function openSession(id: string): Promise<Session> {
    return live.get(id) ?? resumeSession(id);
  }

  async function forkSession(id: string, opts: { atSeq: number; id?: string }): Promise<Session> {
    if (!store) throw new UserError('forkSession needs a store: createRuntime({ model, store }).');
    const forkId = opts?.id ?? newSessionId();
    const made = await makeFork({ machine, packages }, store, id, opts?.atSeq, forkId);
    const stored = await store.create({ id: forkId, packageId: made.packageId, snapshot: made.persisted, entry: made.entry });
    // Opened like a resumed session: a model call that was in flight at atSeq runs again.
    return track((onEnd) => restore(forkId, stored.snapshot, { store, revision: stored.revision }, onEnd));
  }

  return { model: options.model, packages, machine, store, live, limits, createSession, resumeSession, restoreSession, openSession, forkSession };
}
