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
import { createActor, initialTransition, type Actor, type InspectionEvent } from 'xstate';
import { createManagerTurn, createWorkerTurn, type DeltaLookup } from '../core/agents/turns.js';
import type { TagVersion } from '../core/blackboard/blackboard.js';
import { SessionNotFoundError, UserError } from '../core/errors.js';
import { DEFAULT_MAX_BURST, type SessionContext } from '../core/machines/session.context.js';
import { DEFAULT_WINDOW, windowLimitsProblem, type WindowLimits } from '../core/machines/transcript.js';
import { sessionMachine, type SessionMachine } from '../core/machines/session.machine.js';
import { stateString } from '../core/machines/refusals.js';
import { checkMaxBurst, resolveLimits } from '../core/limits.js';
import { loadPackages, type SkillPackage } from '../skills/index.js';
import { DEFAULT_LEASE_MS, leaseOwnerName } from '../store/lease-keeper.js';
import { readOnlyView } from './read-only-view.js';
import { allTagVersions, findTagVersion, fullTranscript, historyItems, MemoryArchive, readVersions, type ArchiveReader } from './archive.js';
import { makeFork } from './fork.js';
import { emittedBy, packageInfoOf, type ForkedPayload } from './journal-replay.js';
import { runtimeTools } from './runtime-tools.js';
import { nextToolCall } from '../core/machines/tool-calls.js';
import { createToolCallActor } from './tool-call-actor.js';
import type { ToolCallInput } from '../core/tools/server-tools.js';
import { envelope, openEnvelopeWithHistory, resolvedSnapshot, resumable, sessionEnvelope } from './persisted.js';
import { deadlineAt, systemClock } from './session-deadline.js';
import { Session, type Persistence } from './session.js';
import { WebhookNotices } from './webhook-notices.js';
import { checkReceivers } from '../webhooks/receivers.js';
import { sessionView } from '../core/view.js';
import { checkSessionId } from '../ids.js';
import { OwnLease, PassedLease, type SessionLeasing } from './session-lease.js';
import { packageVersionOf, shortHash } from '../skills/package-version.js';
import { PinnedVersions, storedVersion } from './pinned-versions.js';
import { upgradeProblem } from '../core/machines/package-upgrade.js';
import { checkedMachine, providesActor } from './provided-machine.js';
import { withDeploymentDeadlines } from './deployment-deadlines.js';
import { SessionTracer, TRACER_NAME } from './tracing.js';
import { OpenAIModel } from '../models/openai-model.js';
import {
  checkMaxBurstTokens,
  seededBoard,
  checkedToolVariables,
  checkedOwnership,
  checkedDeadlines,
  type CreateSessionOptions,
  type ForkOptions,
  type ResumeOptions,
  type Runtime,
  type RuntimeOptions,
  type SessionHistory,
  type UpgradeOptions,
  type UpgradeResult,
} from './runtime-options.js';

export type { CreateSessionOptions, ForkOptions, ResumeOptions, Runtime, RuntimeOptions, SessionHistory, UpgradeOptions, UpgradeResult };

export const packageInfo = packageInfoOf;

export function newSessionId(): string {
  return `s_${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
}

/**
 * A runtime: sessions of the skill packages on one model and one store (default: in memory).
 *
 * @example
 * const runtime = createRuntime({ model: new OpenAIModel({ model: 'gpt-4o-mini' }), store: new SqliteStore('steward.db') });
 * const session = await runtime.createSession({ packageId: 'short-story' });
 * const later = await runtime.resumeSession(session.id); // another process: the same session
 */
export function createRuntime(options: RuntimeOptions): Runtime {
  if (!options?.model || typeof options.model.complete !== 'function') {
    throw new UserError('createRuntime needs a model: pass { model } (an OpenAIModel, the demo model, or a ScriptedModel in tests).');
  }
  if (options.approval !== undefined && typeof options.approval !== 'function')
    throw new UserError("createRuntime: approval must be a function (step, context) => 'always' | 'never' | 'model'.");
  const maxBurst = checkMaxBurst(options.maxBurst ?? DEFAULT_MAX_BURST, 'createRuntime');
  const maxBurstTokens = checkMaxBurstTokens(options.maxBurstTokens, 'createRuntime');
  const windowProblem = windowLimitsProblem(options.window);
  if (windowProblem) throw new UserError(`createRuntime: ${windowProblem}.`);
  const window: WindowLimits = { ...DEFAULT_WINDOW, ...options.window };
  const limits = resolveLimits(options.limits);
  const packages = loadPackages(options.packagesDir);
  const store = options.store;
  const webhooks = options.webhooks === undefined ? [] : checkReceivers(options.webhooks, 'createRuntime');
  if (webhooks.length && !store?.outbox)
    throw new UserError(
      'createRuntime: webhooks need a store with an outbox (MemoryStore, SqliteStore, PostgresStore): messages are written with the journal entry that causes them.',
    );
  // Each package on disk is a version (the hash of its manifest and prompts); a session runs
  // the version it is pinned to, from the store when the disk has another by now.
  const versions = new PinnedVersions(
    [...packages.values()].map((pkg) => packageVersionOf(pkg)),
    store,
  );
  const promptOf = (packageId: string, workerId: string, version?: string) => versions.prompt(packageId, workerId, version);
  const onDisk = (packageId: string) => versions.disk(packageId)?.hash;
  /** Hashes of the disk's versions this runtime has written to its store. */
  const versionsWritten = new Set<string>();
  // One PackageInfo per package, shared by every session of this runtime (and swapped into
  // restored snapshots when it matches), so sessions do not each carry a copy.
  const deadlines = checkedDeadlines(options.deadlines, 'createRuntime');
  const infos = new Map([...packages.values()].map((pkg) => [pkg.id, withDeploymentDeadlines(packageInfo(pkg, onDisk(pkg.id)), deadlines)]));
  const infoJson = new Map([...infos.values()].map((info) => [info.id, JSON.stringify(info)]));
  const leases = store?.leases;
  const leaseOwner = options.leaseOwner ?? leaseOwnerName('node');
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  if (!Number.isInteger(leaseMs) || leaseMs < 100)
    throw new UserError(`createRuntime: leaseMs must be a whole number of milliseconds ≥ 100 (got ${String(options.leaseMs)}).`);
  if (typeof leaseOwner !== 'string' || !leaseOwner.trim() || leaseOwner.length > 200)
    throw new UserError('createRuntime: leaseOwner must be a name of 1 to 200 characters (who this process is, e.g. "billing-worker on web-3").');
  /** The session's own lease, on a store with leases (none was passed). */
  const ownLease = (id: string): OwnLease | undefined => (leases ? new OwnLease(leases, id, leaseOwner, leaseMs) : undefined);
  /**
   * Every Session this runtime holds, by id, until its actor ends: created, resumed, forked
   * and restored ones. The turns read archived versions and stream text through it.
   */
  const live = new Map<string, Session>();
  const lookup = async (sessionId: string, tag: string, versions: readonly number[]): Promise<TagVersion[]> => {
    const session = live.get(sessionId);
    if (session) return session.archivedVersions(tag, versions);
    return store ? readVersions(storeReader(sessionId), tag, versions) : [];
  };
  // Before each model call the turn asks the session's lease (stores with leases), found by
  // the session's actor system: registered before the actor starts, so a resumed session's
  // first call is gated too.
  const gates = new WeakMap<object, SessionLeasing>();
  const beforeModelCall = (system: object) => gates.get(system)?.beforeModelCall();
  const started = (actor: Actor<SessionMachine>, leasing: SessionLeasing | undefined): Actor<SessionMachine> => {
    if (leasing) gates.set(actor.system, leasing);
    return actor.start();
  };
  // A model call streams only while a listener of its session wants its deltas.
  const deltas: DeltaLookup = (sessionId, agent) => live.get(sessionId)?.deltaSinks(agent);
  const base = options.machine === undefined ? sessionMachine : checkedMachine(options.machine);
  // MCP tools: one host for the runtime's sessions, made when a worker first needs a tool.
  const tools = runtimeTools({
    packageOf: (id) => packages.get(id),
    ...(options.toolApproval ? { toolApproval: options.toolApproval } : {}),
    ...(options.toolHost ? { host: options.toolHost } : {}),
  });
  // Calls under way when a session was saved, by session: a restored session restarts its call,
  // which may already have taken effect (the process running it died).
  const interruptedCalls = new Map<string, string>();
  const wasInterrupted = (input: ToolCallInput) => {
    const interrupted = interruptedCalls.get(input.sessionId) === input.item.callId;
    interruptedCalls.delete(input.sessionId);
    return interrupted;
  };
  // A tool call reaches its server only once the journal holds it and the lease is still held.
  const beforeToolCall = async (input: ToolCallInput, system: object) => {
    await live.get(input.sessionId)?.journalled();
    await beforeModelCall(system);
  };
  const turnOptions = { lookup, deltas, gate: beforeModelCall, toolbox: tools.toolbox, ...(options.approval ? { approval: options.approval } : {}) };
  const machine = base.provide({
    actors: {
      ...(providesActor(base, 'managerTurn') ? {} : { managerTurn: createManagerTurn(options.model, turnOptions) }),
      ...(providesActor(base, 'workerTurn') ? {} : { workerTurn: createWorkerTurn(options.model, promptOf, turnOptions) }),
      ...(providesActor(base, 'toolCall')
        ? {}
        : { toolCall: createToolCallActor({ host: tools.host, packageOf: (id) => packages.get(id), beforeCall: beforeToolCall, wasInterrupted }) }),
    },
  });
  /** What every Session of this runtime is given, created or restored. */
  const clock = options.clock ?? systemClock;
  const everySession = {
    clock,
    packageOnDisk: onDisk,
    checkEvent: tools.eventProblem,
    ...(options.inspect ? { inspect: options.inspect } : {}),
    ...(webhooks.length ? { webhooks } : {}),
    ...(options.webhookLinks ? { webhookLinks: options.webhookLinks } : {}),
  };
  const tracer = options.tracerProvider?.getTracer(TRACER_NAME);
  const tracedModel = { name: options.model.label, provider: options.model instanceof OpenAIModel ? 'openai' : '_OTHER' };
  const storeReader =
    (id: string): ArchiveReader =>
    (kind, key, opts) =>
      store!.archived(id, kind, key, opts);

  /** The webhook messages of a new session's start: the events its initial transition emits. */
  function createdMessages(input: Parameters<typeof initialTransition<typeof machine>>[1], snapshot: Parameters<typeof sessionView>[0], dueAt: string | null) {
    const notices = new WebhookNotices(webhooks, 0, options.webhookLinks);
    for (const event of emittedBy(initialTransition(machine, input)[1])) notices.noticed(event);
    return notices.take(() => sessionView(snapshot, onDisk, { dueAt }));
  }

  async function createSession(opts: CreateSessionOptions = {}): Promise<Session> {
    // Per-session limits live with this Session object only (a resumed session has the runtime's).
    const sessionLimits = opts.limits ? resolveLimits({ ...limits, ...opts.limits }, 'createSession') : limits;
    let pkg: SkillPackage | undefined;
    if (opts.packageId !== undefined) {
      pkg = packages.get(opts.packageId);
      if (!pkg) throw new UserError(`Unknown package "${opts.packageId}". Packages: ${[...packages.keys()].join(', ')}.`);
    }
    const id = opts.id === undefined ? newSessionId() : checkSessionId(opts.id, 'createSession({ id })');
    const blackboard = seededBoard(opts.blackboard);
    const toolVariables = checkedToolVariables(opts.toolVariables);
    const ownership = checkedOwnership(opts, 'createSession');
    const input = {
      sessionId: id,
      // The runtime's one copy of the package info, unless the session has values of its own.
      package: pkg ? (toolVariables ? { ...infos.get(pkg.id)!, toolVariables } : infos.get(pkg.id)!) : null,
      catalog: pkg ? [] : [...infos.values()],
      maxBurst: checkMaxBurst(opts.maxBurst ?? maxBurst, 'createSession'),
      maxBurstTokens: opts.maxBurstTokens === undefined ? maxBurstTokens : checkMaxBurstTokens(opts.maxBurstTokens, 'createSession'),
      window,
      ...(blackboard ? { blackboard } : {}),
    };
    let persistence: Persistence | null = null;
    let from: SessionContext | null = null;
    if (store) {
      // Persist the initial snapshot before anything can happen to it.
      const probe = createActor(machine, { input });
      const snapshot = sessionEnvelope(probe.logic, probe.getSnapshot());
      const state = stateString(probe.getSnapshot().value);
      from = probe.getSnapshot().context;
      // The payload holds what replay needs to rebuild the same initial context.
      // The package (or a legacy session's catalog) as pinned: replay starts from this version.
      const payload = {
        packageId: pkg?.id ?? null,
        maxBurst: input.maxBurst,
        window,
        ...(input.package ? { package: input.package } : { catalog: input.catalog }),
        ...(blackboard ? { blackboard } : {}),
        ...(input.maxBurstTokens !== null ? { maxBurstTokens: input.maxBurstTokens } : {}),
      };
      // Each version goes to the store with the first session this runtime pins to it (the store keeps it once anyway).
      const pinned = (pkg ? [pkg.id] : [...packages.keys()]).map((packageId) => versions.disk(packageId)!).filter((v) => !versionsWritten.has(v.hash));
      // The wait a new session opens as it starts: what its start emits (the actor emits it
      // after this write) goes with the first entry.
      // A wait the session opens as it starts may have a deadline: due from now, kept with the session.
      const deadline = deadlineAt(probe.getSnapshot(), null, clock.now());
      const outbox = webhooks.length ? createdMessages(input, probe.getSnapshot(), deadline?.dueAt ?? null) : undefined;
      const stored = await store.create({
        id,
        packageId: pkg?.id ?? null,
        snapshot,
        entry: { kind: 'created', type: 'created', payload, state, added: historyItems(null, from), ...(outbox ? { outbox } : {}) },
        packageVersions: pinned.map(storedVersion),
        deadline,
        ...ownership,
      });
      for (const version of pinned) versionsWritten.add(version.hash);
      const leasing = ownLease(id);
      persistence = { store, revision: stored.revision, deadline, ...(leasing ? { leasing } : {}) };
    }
    const start = (inspect: ((e: InspectionEvent) => void) | undefined) =>
      started(createActor(machine, { input, ...(inspect ? { inspect } : {}) }), persistence?.leasing);
    return hold(
      (onEnd) =>
        new Session({
          id,
          start,
          persistence,
          onEnd,
          limits: sessionLimits,
          archivedFrom: from,
          ...everySession,
        }),
    );
  }

  async function resumeSession(id: string, resumeOptions: ResumeOptions = {}): Promise<Session> {
    if (!store) throw new UserError('resumeSession needs a store: createRuntime({ model, store }).');
    checkSessionId(id, 'resumeSession');
    // Let a live copy finish its queued writes first, or they would race this one's first write
    // (a memory-only copy, from restoreSession, writes nothing and is left alone).
    const held = live.get(id);
    if (held?.revision !== undefined) await held.close();
    const own = resumeOptions.lease ? undefined : ownLease(id);
    const leasing: SessionLeasing | undefined = resumeOptions.lease
      ? new PassedLease(resumeOptions.lease, resumeOptions.leaseCheck, resumeOptions.leaseHandOver, resumeOptions.leaseRearm)
      : own;
    // Lease first, then read (in one statement when the lease is this session's own): what is
    // loaded cannot change under this process any more.
    const grant = own ? await own.hold() : null;
    try {
      const stored = resumeOptions.from ?? grant?.read ?? (await store.load(id));
      if (!stored) throw new SessionNotFoundError(id);
      const opened = openEnvelopeWithHistory(id, stored.snapshot);
      opened.snapshot = resumable(id, opened.snapshot);
      let revision = stored.revision;
      // A session saved before pinning is pinned now, to its package on disk.
      const pinned = pinToDisk(opened.snapshot as { context: SessionContext });
      if (pinned) opened.snapshot = pinned.snapshot;
      const pin = pinned?.version;
      // A snapshot of an older schema (or one just pinned): save it migrated, with the history
      // it moved out of the context, before anything runs, so nothing it held is lost.
      const lease = leasing?.current;
      if (opened.migratedHistory || pin) {
        revision = await store.append({
          id,
          expectedRevision: revision,
          entries: [],
          snapshot: envelope(opened.snapshot),
          ...(opened.migratedHistory ? { archive: opened.migratedHistory } : {}),
          ...(pin ? { packageVersions: [pin] } : {}),
          ...(lease ? { lease } : {}),
        });
        leasing?.wrote();
      }
      return restore(id, opened.snapshot, { store, revision, deadline: stored.deadline, ...(leasing ? { leasing } : {}) });
    } catch (error) {
      await own?.letGo();
      throw error;
    }
  }

  /**
   * Pins a session saved before pinning (its package has no `version`) to its package on
   * disk, if that is still there: the snapshot with the disk's package in a new context, and
   * the version to keep in the store. Null when there is nothing to pin. The snapshot is not
   * changed in place: a model turn in flight was given the saved context as its input
   * (context-inputs.ts), and the call it makes again must be the one that was made.
   */
  function pinToDisk<S extends { context: SessionContext }>(snapshot: S): { snapshot: S; version: ReturnType<typeof storedVersion> } | null {
    const saved = snapshot.context.package;
    const disk = saved && saved.version === undefined ? versions.disk(saved.id) : undefined;
    if (!saved || !disk) return null;
    return { snapshot: { ...snapshot, context: { ...snapshot.context, package: infos.get(saved.id)! } }, version: storedVersion(disk) };
  }

  /** A Session of a snapshot already opened (validated, migrated), held in `live` while it runs. */
  function restore(id: string, opened: unknown, persistence: Persistence | null, memory?: MemoryArchive): Session {
    const snapshot = opened as { context: SessionContext; value?: unknown };
    // A tool call was under way when the session was saved.
    if (stateString(snapshot.value) === 'running.worker.calling') interruptedCalls.set(id, nextToolCall(snapshot.context).item.callId);
    const pkg = snapshot.context.package;
    if (pkg && infoJson.get(pkg.id) === JSON.stringify(pkg)) snapshot.context.package = infos.get(pkg.id)!;
    const start = (inspect: ((e: InspectionEvent) => void) | undefined) =>
      started(createActor(machine, { snapshot: snapshot as never, input: { sessionId: id }, ...(inspect ? { inspect } : {}) }), persistence?.leasing);
    return hold(
      (onEnd) =>
        new Session({
          id,
          start,
          persistence,
          onEnd,
          limits,
          archivedFrom: snapshot.context,
          ...(memory ? { memory } : {}),
          ...everySession,
        }),
    );
  }

  function restoreSession(persisted: unknown): Session {
    const raw = (persisted as { snapshot?: { context?: { sessionId?: unknown } } } | null)?.snapshot?.context?.sessionId;
    const id = typeof raw === 'string' ? raw : '(unknown)';
    const opened = openEnvelopeWithHistory(id, persisted);
    // An older snapshot's history, moved out of the context by the migration, stays in memory with it.
    let memory: MemoryArchive | undefined;
    if (opened.migratedHistory) (memory = new MemoryArchive()).add(opened.migratedHistory);
    return restore(id, opened.snapshot, null, memory);
  }

  /** Holds a session in `live` while it runs; a done, stopped or failed one is let go. */
  function hold(make: (onEnd: () => void) => Session): Session {
    let ended = false;
    let session: Session | undefined;
    // onEnd may run inside make() already: a restored session that is done ends at once.
    session = make(() => {
      ended = true;
      if (session && live.get(session.id) === session) live.delete(session.id);
    });
    if (!ended) live.set(session.id, session);
    if (!ended && tracer) session.subscribe(new SessionTracer(tracer, session.id, session.view().packageId, tracedModel).listener, { textDeltas: false });
    return session;
  }

  async function history(id: string): Promise<SessionHistory> {
    checkSessionId(id, 'history');
    const session = live.get(id);
    if (session)
      return {
        transcript: (name) => session.transcript(name),
        tagVersion: (tag, v) => session.tagVersion(tag, v),
        tagVersions: (tag) => session.tagVersions(tag),
      };
    if (!store) throw new SessionNotFoundError(id);
    const stored = await store.load(id);
    if (!stored) throw new SessionNotFoundError(id);
    const opened = openEnvelopeWithHistory(id, stored.snapshot);
    const context = (opened.snapshot as { context: SessionContext }).context;
    // A snapshot not yet migrated in the store: its own history is still in it.
    const migrated = new MemoryArchive();
    if (opened.migratedHistory) migrated.add(opened.migratedHistory);
    const read: ArchiveReader = async (kind, key, o) => [...(await migrated.read(kind, key, o)), ...(await store.archived(id, kind, key, o))];
    return {
      transcript: (name = 'manager') => fullTranscript(read, name, context.transcripts[name]),
      tagVersion: (tag, v) => findTagVersion(read, context, tag, v),
      tagVersions: (tag) => allTagVersions(read, context, tag),
    };
  }

  async function openSession(id: string): Promise<Session> {
    checkSessionId(id, 'openSession');
    const held = live.get(id);
    // On a runtime with a store, a memory-only copy (restoreSession) is not the stored session: resume that one.
    return held && (held.revision !== undefined || !store) ? held : resumeSession(id);
  }

  async function forkSession(id: string, opts: ForkOptions): Promise<Session> {
    if (!store) throw new UserError('forkSession needs a store: createRuntime({ model, store }).');
    checkSessionId(id, 'forkSession');
    const forkId = opts?.id === undefined ? newSessionId() : checkSessionId(opts.id, 'forkSession({ id })');
    const ownership = checkedOwnership(opts ?? {}, 'forkSession');
    const made = await makeFork({ machine, packages }, store, id, opts?.atSeq, forkId);
    // A fork of a session saved before pinning starts pinned, its entry's snapshot too.
    const pinned = pinToDisk(made.persisted.snapshot as { context: SessionContext });
    const persisted = pinned ? { ...made.persisted, snapshot: pinned.snapshot } : made.persisted;
    const entry = pinned ? { ...made.entry, payload: { ...(made.entry.payload as ForkedPayload), snapshot: persisted } } : made.entry;
    // The fork's open wait starts its deadline afresh: its time runs from the fork.
    const deadline = deadlineAt(resolvedSnapshot(machine, forkId, persisted), null, clock.now());
    const stored = await store.create({
      id: forkId,
      packageId: made.packageId,
      snapshot: persisted,
      entry,
      ...(pinned ? { packageVersions: [pinned.version] } : {}),
      deadline,
      ...ownership,
    });
    // Opened like a resumed session: a model call that was in flight at atSeq runs again,
    // under the fork's own lease (nobody else knows its id yet).
    const leasing = ownLease(forkId);
    await leasing?.hold();
    return restore(forkId, openEnvelopeWithHistory(forkId, stored.snapshot).snapshot, {
      store,
      revision: stored.revision,
      deadline: stored.deadline,
      ...(leasing ? { leasing } : {}),
    });
  }

  async function upgradeSession(id: string, opts: UpgradeOptions = {}): Promise<UpgradeResult> {
    if (!store) throw new UserError('upgradeSession needs a store: createRuntime({ model, store }).');
    checkSessionId(id, 'upgradeSession');
    if (opts.to !== undefined && opts.to !== 'current')
      throw new UserError(`upgradeSession: to must be "current" (the package on disk), got ${JSON.stringify(String(opts.to)).slice(0, 60)}.`);
    const session = await openSession(id);
    const context = session.actorRef.getSnapshot().context;
    const pkg = context.package;
    if (!pkg) throw new UserError(`Session "${id}" has no package yet (it waits for one to be chosen): there is nothing to upgrade.`);
    const disk = versions.disk(pkg.id);
    if (!disk)
      throw new UserError(`Package "${pkg.id}" of session "${id}" is not in this runtime's packages folders: add its folder (--packages) to upgrade to it.`);
    const from = pkg.version ?? null;
    if (from === disk.hash) return { from, to: disk.hash, changed: false, view: session.view() };
    const next = infos.get(pkg.id)!;
    const problem = upgradeProblem(context, next);
    if (problem) throw new UserError(`Session "${id}" cannot move to version ${shortHash(disk.hash)} of "${pkg.id}": ${problem}`);
    const result = await session.upgrade(
      { type: 'package_upgraded', package: next, from, to: disk.hash, ...(opts.by !== undefined ? { by: opts.by } : {}) },
      storedVersion(disk),
    );
    if (!result.ok) throw new UserError(result.error.message);
    return { from, to: disk.hash, changed: true, view: result.view };
  }

  return {
    model: options.model,
    packages,
    upgradeSession,
    packageVersionOnDisk: onDisk,
    machine,
    store,
    webhooks,
    clock,
    live: readOnlyView(live),
    limits,
    createSession,
    resumeSession,
    restoreSession,
    openSession,
    history,
    forkSession,
    close: () => tools.close(),
  };
}
