/**
 * What a runtime is configured with and what it offers: `createRuntime`'s options, the
 * `Runtime` interface, the options of its methods, and the checks of the values an app
 * passes in (each names the fix). The runtime's code is runtime.ts.
 */
import type { WebhookReceiver } from '../webhooks/receivers.js';
import type { TracerProvider } from '@opentelemetry/api';
import type { InspectionEvent } from 'xstate';
import type { ApprovalRule } from '../core/agents/approvals.js';
import type { Blackboard, TagVersion } from '../core/blackboard/blackboard.js';
import { UserError } from '../core/errors.js';
import type { Limits } from '../core/limits.js';
import type { SessionMachine } from '../core/machines/session.machine.js';
import type { WindowLimits } from '../core/machines/transcript.js';
import type { ChatMessage, Model } from '../core/models/model.js';
import { CONTROL_OR_INVISIBLE } from '../core/text/names.js';
import { CallerNameSchema, ParticipantsSchema } from '../store/participants.js';
import type { DeadlinePolicy } from '../core/machines/deadlines.js';
import { PackageDeadlinesSchema } from '../core/skills/package-schema.js';
import type { SkillPackage } from '../skills/index.js';
import type { Lease, SessionStore, StoredSession } from '../store/session-store.js';
import type { TranscriptName } from './archive.js';
import type { ToolHostOptions } from '../mcp/types.js';
import type { ToolApprovalRule } from './worker-tools.js';
import type { Session } from './session.js';
import type { LeaseHandOver, LeaseRearm } from './session-lease.js';
import type { SessionView } from '../core/view.js';
import type { DeadlineClock } from './session-deadline.js';
import type { WebhookLinks } from '../webhooks/links.js';
import { setOwn } from '../core/blackboard/keyed.js';

export interface RuntimeOptions {
  model: Model;
  /**
   * The machine every session runs: `sessionMachine.provide({ guards, actions, actors })`
   * (default: Steward's own). Store, journal, replay, fork, serve and the inspector all use
   * it. Its states and events must be the chart's (checked here: MachineMismatchError); the
   * runtime provides its manager and worker turns unless the machine brings its own.
   */
  machine?: SessionMachine;
  /**
   * The deployment's approval policy, asked for each step the manager proposes: `always`
   * (a person approves it), `never` (it runs at once) or `model` (the manager's
   * requiresApproval decides). `step.approval` is the worker's front matter policy (default
   * `model`), which applies without this option. The answer is journalled with the reply.
   */
  approval?: ApprovalRule;
  /**
   * The deployment's rule for workers' MCP tool calls, asked for each call: `always` (a person
   * decides), `never` (it runs at once) or undefined (the manifest's `approval`, else the tool's
   * `readOnlyHint` from a trusted server, else a person decides). Journalled with the reply.
   */
  toolApproval?: ToolApprovalRule;
  /**
   * The MCP tool host's settings: where `${VAR}` of a server's configuration is read (default
   * `process.env`), where local servers' stderr goes (default: this process's stderr), a call's
   * default time limit, size limits.
   */
  toolHost?: ToolHostOptions;
  /**
   * Traces every session with OpenTelemetry (GenAI semantic conventions; docs/design.md
   * "Traces"): pass your SDK's provider, or `trace.getTracerProvider()` for the global one.
   * Off by default: without it no listener is attached.
   */
  tracerProvider?: TracerProvider;
  /** LLM rounds allowed between two user actions (default 12). */
  maxBurst?: number;
  /**
   * Tokens (prompt + completion, as the model reports them) allowed per burst, between two
   * user actions; off by default. Checked before each model call (the guard
   * `burstTokensWithinBudget`); over it the session waits for the user with a notice.
   */
  maxBurstTokens?: number;
  /**
   * Folder(s) of skill packages (default: the bundled ones), each holding package folders.
   * Only these are loaded: add `bundledPackagesDir` to keep the bundled packages beside yours.
   */
  packagesDir?: string | readonly string[];
  /** Where sessions are saved; without one, sessions live in memory only. */
  store?: SessionStore;
  /** Receives XState inspection events of every session (see src/inspect). */
  inspect?: (event: InspectionEvent) => void;
  /** Size limits (src/core/limits.ts, DEFAULT_LIMITS); `userTextChars` can also be set per session. */
  limits?: Partial<Limits>;
  /**
   * Limits of the transcript windows the context keeps and the prompts show (default
   * { messages: 30, chars: 32000 }: about the current burst and the one before it, see
   * docs/design.md §5); older messages stay readable through `history()`.
   */
  window?: Partial<WindowLimits>;
  /**
   * On a store with leases (PostgresStore): who this process is in the leases table, as
   * another process is told when it finds a session running here (default
   * "node on HOST pid N"). A session takes the lease before it runs and lets it go when it waits.
   */
  leaseOwner?: string;
  /** On a store with leases: how long a lease lasts unrenewed (default 30 s): a session this process left running is taken over that long after. */
  leaseMs?: number;
  /**
   * Webhook receivers (needs a store with an outbox: every store of Steward's). When a
   * session starts waiting, is answered or is done, a message for each receiver that wants
   * the event is written to the store's outbox with the journal entry (src/webhooks/events.ts);
   * a deliverer sends them (`steward serve` runs one; an app without serve runs
   * `startWebhookDeliverer` from `steward/serve`). The secrets are the deliverer's: the runtime
   * reads only `url` and `events`.
   */
  webhooks?: readonly WebhookReceiver[];
  /**
   * The clock waits' deadlines are armed on (default: the system's: `Date.now` and timers).
   * Tests pass one they move (session-deadline.ts, DeadlineClock).
   */
  clock?: DeadlineClock;
  /**
   * The deployment's deadlines, by waiting reason, e.g. `{ approve_step: { after: '24h',
   * outcome: 'escalate', to: 'ops', then: { after: '4h', outcome: 'reject' } } }`
   * (src/core/machines/deadlines.ts). Each reason given replaces the manifest's for that
   * reason; a worker's own front matter `deadlines` still wins for the waits about it. Kept
   * with each new session's package (a session keeps the deadlines it was created with).
   */
  deadlines?: DeadlinePolicy;
  /**
   * With `webhooks`: the decision links a `session.waiting` message carries when its wait names
   * the groups that decide it, one per person who may (src/webhooks/links.ts). `steward serve`
   * makes them for its named tokens in those groups (`webhookLinksFor` of `steward/serve`).
   */
  webhookLinks?: WebhookLinks;
}

/** What a caller that holds a session's lease passes to `resumeSession` (SessionHost does). */
export interface ResumeOptions {
  /** The stored session the caller already loaded and checked (no second read that could differ). */
  from?: StoredSession;
  /** A lease the caller holds (and renews) on it; every write is fenced by it. Without one, the session takes its own. */
  lease?: Lease;
  /** With `lease`: asked before each model call; false (the lease is lost) stops the session instead. */
  leaseCheck?: () => Promise<boolean>;
  /** With `lease`: whether the write that saves the session at rest gives the lease up too (default: it never does; the caller releases it). */
  leaseHandOver?: LeaseHandOver;
  /** With `lease`: the caller keeps the session loaded between runs, and its next run's first write takes a new lease (LeaseRearm). */
  leaseRearm?: LeaseRearm;
}

export interface CreateSessionOptions {
  packageId?: string;
  maxBurst?: number;
  /** Tokens per burst for this session (default: the runtime's, off by default); null turns it off. */
  maxBurstTokens?: number | null;
  id?: string;
  limits?: Pick<Partial<Limits>, 'userTextChars'>;
  /** Tags to put on the blackboard before the session starts (version 1 of each, written by "app"). */
  blackboard?: Record<string, string>;
  /**
   * This session's values for its package's MCP servers' `${VAR}`, over the runtime's
   * environment: e.g. `{ STEWARD_FILES_DIR: '/srv/notes/ana' }` confines the bundled file-notes
   * package's filesystem server to that folder for this session only (servers started with other
   * values are other servers). Kept with the session, in the store: never a secret (those come
   * from the environment).
   */
  toolVariables?: Record<string, string>;
  /**
   * Who the session belongs to: the name of the caller who creates it (`steward serve` passes
   * the named token's, or its app's caller's). Default null: no named caller (the CLI, a shared
   * token). Kept in the store beside the session, for the servers' access rule (src/http/access.ts).
   */
  owner?: string | null;
  /**
   * People (their names) and groups (`group:NAME`) who see and decide the session besides its
   * owner; at most 50, each kept once. Kept in the store beside the session.
   */
  participants?: readonly string[];
}

/** `forkSession`'s options: where to fork, the fork's id, and who it belongs to (a fork is a new session). */
export interface ForkOptions {
  /** The journal entry to fork after (its seq). */
  atSeq: number;
  id?: string;
  /** The fork's owner (default null): as `createSession`'s. */
  owner?: string | null;
  /** The fork's participants (default none): as `createSession`'s. */
  participants?: readonly string[];
}

export interface UpgradeOptions {
  /** Where to move the session: 'current' (the default), the package on disk. */
  to?: 'current';
  /** Who asked for it (journalled with the entry). */
  by?: string;
}

/** What `upgradeSession` did: the hashes before and after, and the session's view now. */
export interface UpgradeResult {
  /** The version the session was pinned to (null: saved before pinning). */
  from: string | null;
  to: string;
  /** False when the session already ran the package on disk: nothing was written. */
  changed: boolean;
  view: SessionView;
}

/** A session's whole history — every transcript message and tag version ever written. */
export interface SessionHistory {
  transcript(name?: TranscriptName): Promise<ChatMessage[]>;
  tagVersion(tag: string, version: number): Promise<TagVersion | undefined>;
  tagVersions(tag: string): Promise<TagVersion[]>;
}

export interface Runtime {
  /**
   * Stops the MCP servers this runtime started for its workers' tools (its child processes).
   * Sessions and the store stay as they are; call it when the app is done with the runtime.
   */
  close(): Promise<void>;
  readonly model: Model;
  readonly packages: ReadonlyMap<string, SkillPackage>;
  readonly machine: SessionMachine;
  readonly store: SessionStore | undefined;
  /** The webhook receivers the runtime writes messages for (`createRuntime({ webhooks })`); a deliverer sends them. */
  readonly webhooks: readonly WebhookReceiver[];
  /** The clock waits' deadlines are armed on (`createRuntime({ clock })`); a server's scan of due deadlines reads it too. */
  readonly clock: DeadlineClock;
  createSession(options?: CreateSessionOptions): Promise<Session>;
  /**
   * A new session whose state is this one's after journal entry `atSeq` (replayed through
   * the pure machine, as time travel does), with `forkedFrom` in its view and a first
   * journal entry "forked". The original is not touched; a model call in flight at that
   * point runs again in the fork.
   */
  forkSession(id: string, options: ForkOptions): Promise<Session>;
  readonly limits: Readonly<Limits>;
  /**
   * Reopens a saved session; a model call that was in flight runs again. On a store with
   * leases, another process running it gives SessionLeasedError (`session_running_elsewhere`).
   */
  resumeSession(id: string, options?: ResumeOptions): Promise<Session>;
  /**
   * A live, in-memory session from a persisted snapshot (`session.persisted()`) that the app
   * stored itself; nothing is journalled. Validated like a stored one.
   */
  restoreSession(persisted: unknown): Session;
  /** The live session with this id if this runtime holds it, else `resumeSession(id)`. */
  openSession(id: string): Promise<Session>;
  /**
   * Moves a waiting session to the version of its package on disk (`steward upgrade`): a
   * journal entry `package_upgraded` with the hashes before and after. Refused (a UserError,
   * nothing written) while the session runs, or when the wait in progress would not be valid
   * in the new version (its step's worker, the artifact under review's tags).
   */
  upgradeSession(id: string, options?: UpgradeOptions): Promise<UpgradeResult>;
  /** The hash of a package's version on disk (undefined: no such package): what new sessions are pinned to. */
  packageVersionOnDisk(packageId: string): string | undefined;
  /** Sessions this runtime holds in memory (restored ones too), until they are done, stopped or failed. */
  readonly live: ReadonlyMap<string, Session>;
  /**
   * The whole history of a session: the live one's, else the store's. Snapshots keep only
   * bounded windows and the latest tag bodies; this reads everything ever written.
   */
  history(id: string): Promise<SessionHistory>;
}

export function checkMaxBurstTokens(value: number | null | undefined, where: string): number | null {
  if (value === undefined || value === null) return null;
  if (!Number.isInteger(value) || value < 1)
    throw new UserError(`${where}: maxBurstTokens must be a whole number of tokens ≥ 1, or null for no budget (got ${String(value)}).`);
  return value;
}

/**
 * `createRuntime({ deadlines })`, checked (undefined: none given, or an empty object).
 *
 * @example
 * checkedDeadlines({ approve_step: { after: '24h', outcome: 'reject' } }, 'createRuntime'); // { approve_step: { after: '24h', outcome: 'reject' } }
 */
export function checkedDeadlines(value: unknown, where: string): DeadlinePolicy | undefined {
  if (value === undefined) return undefined;
  const parsed = PackageDeadlinesSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const at = ['deadlines', ...issue.path.map(String)].join('.');
    throw new UserError(`${where}: ${at} ${issue.message}.`);
  }
  return Object.keys(parsed.data).length ? parsed.data : undefined;
}

/** An app's seed tags as version 1 of each, written by "app"; undefined when there are none. */
export function seededBoard(tags: Record<string, string> | undefined): Blackboard | undefined {
  if (tags === undefined) return undefined;
  if (typeof tags !== 'object' || tags === null || Array.isArray(tags))
    throw new UserError('createSession: blackboard must be an object of tag → body (strings).');
  const at = new Date().toISOString();
  const board: Blackboard = {};
  for (const [tag, body] of Object.entries(tags)) {
    if (typeof body !== 'string' || tag.length === 0 || tag.length > 120)
      throw new UserError(`createSession: blackboard tag "${tag.slice(0, 40)}" needs a name of 1 to 120 characters and a string body.`);
    setOwn(board, tag, [{ version: 1, body, writtenBy: 'app', at }]);
  }
  return Object.keys(board).length ? board : undefined;
}

/**
 * createSession's (and forkSession's) `owner` and `participants`, checked: an owner is a
 * caller's name, participants as ParticipantsSchema bounds them (each kept once).
 *
 * @example
 * checkedOwnership({ owner: 'alice', participants: ['bob', 'group:ops', 'bob'] }, 'createSession'); // { owner: 'alice', participants: ['bob', 'group:ops'] }
 */
export function checkedOwnership(
  options: { owner?: string | null; participants?: readonly string[] },
  where: string,
): { owner: string | null; participants: string[] } {
  const owner = options.owner ?? null;
  if (owner !== null) {
    const parsed = CallerNameSchema.safeParse(owner);
    if (!parsed.success) throw new UserError(`${where}: owner ${parsed.error.issues[0]!.message} (the name of the caller who creates the session, or null).`);
  }
  const parsed = ParticipantsSchema.safeParse(options.participants ?? []);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const at = issue.path.length ? `participants[${String(issue.path[0])}]` : 'participants';
    throw new UserError(`${where}: ${at}: ${issue.message}; a participant is a person's name or group:NAME.`);
  }
  return { owner, participants: parsed.data };
}

/** Variables a session may set at most, and the longest value (a path). */
const MAX_TOOL_VARIABLES = 32;
const MAX_TOOL_VARIABLE_CHARS = 4_096;

/**
 * createSession's `toolVariables`, checked: names as `${VAR}` writes them, values of one line.
 *
 * @example
 * checkedToolVariables({ STEWARD_FILES_DIR: '/srv/notes' }); // { STEWARD_FILES_DIR: '/srv/notes' }
 */
export function checkedToolVariables(variables: Record<string, string> | undefined): Record<string, string> | undefined {
  if (variables === undefined) return undefined;
  if (typeof variables !== 'object' || variables === null || Array.isArray(variables))
    throw new UserError('createSession: toolVariables must be an object of variable name → value (strings).');
  const entries = Object.entries(variables);
  if (entries.length > MAX_TOOL_VARIABLES) throw new UserError(`createSession: toolVariables sets ${entries.length} variables; at most ${MAX_TOOL_VARIABLES}.`);
  const checked: Record<string, string> = {};
  for (const [name, value] of entries) {
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,127}$/.test(name))
      throw new UserError(
        `createSession: toolVariables name "${name.slice(0, 40)}" is not a variable name (letters, digits and _, not starting with a digit).`,
      );
    if (typeof value !== 'string' || value.length > MAX_TOOL_VARIABLE_CHARS || CONTROL_OR_INVISIBLE.test(value))
      throw new UserError(
        `createSession: toolVariables.${name} must be one line of at most ${MAX_TOOL_VARIABLE_CHARS} characters, with no control or invisible character.`,
      );
    setOwn(checked, name, value);
  }
  return entries.length ? checked : undefined;
}
