/**
 * What every command shares: the store (--db, STEWARD_DB, default .steward/steward.db),
 * the model (OPENAI_* from the environment, else the offline demo model), the traces
 * (OTEL_TRACES_EXPORTER, see ./otel-env.ts; flushed by `close()`), the runtime,
 * a read-only look at a stored session, and the failures commands end with.
 */
import { readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { resolve } from 'node:path';
import { text } from 'node:stream/consumers';
import { InvalidArgumentError } from 'commander';
import { limitsFromEnv, MAX_BURST_ADVICE, MAX_BURST_LIMIT, quotedSetting } from '../core/limits.js';
import { BY_MAX_CHARS } from '../core/machines/session.events.js';
import { SessionNotFoundError, StewardError, type StewardErrorCode } from '../core/errors.js';
import { DemoModel } from '../models/demo-model.js';
import type { Model } from '../core/models/model.js';
import { storedView } from '../runtime/persisted.js';
import { createRuntime, type Runtime, type RuntimeOptions } from '../runtime/runtime.js';
import type { SessionView } from '../core/view.js';
import { leaseOwnerName } from '../store/lease-keeper.js';
import { isPostgresUrl, openStore, redactUrl, resolveStoreLocation } from '../store/open-store.js';
import type { SessionStore } from '../store/session-store.js';
import { defaultDbPath } from '../store/sqlite-store.js';
import { tracesFromEnv } from './otel-env.js';
import { packagesDirs } from './packages-option.js';
import { safeJson } from '../text/safe-text.js';
import type { CliIo } from './io.js';
import { checkSessionId } from '../ids.js';

/** Options every command inherits from the program. */
export interface GlobalOptions {
  db?: string;
  /** Who acts (`--as`): recorded as `by` with each user event this command sends. */
  as?: string;
  /** `--packages DIR` (repeatable): folders of skill packages beside the bundled ones (see ./packages-option.ts). */
  packages?: string[];
}

/**
 * Who acts, for the `by` of the events a command sends: `--as NAME`, else the OS user name
 * (none when the OS has no name for the user: the events then carry no `by`).
 */
export function actorName(options: GlobalOptions): string | undefined {
  if (options.as !== undefined) {
    const name = options.as.trim();
    if (!name) throw new CliError('usage', '--as needs a name (who acts), e.g. --as alice.');
    if (name.length > BY_MAX_CHARS) throw new CliError('usage', `--as takes a name of at most ${BY_MAX_CHARS} characters.`);
    return name;
  }
  try {
    return userInfo().username || undefined;
  } catch {
    return undefined;
  }
}

/** A failure a command ends with: a stable code (as in StewardError) and a message for humans. */
export class CliError extends StewardError {
  static override readonly errorName: string = 'CliError';
  constructor(code: StewardErrorCode, message: string) {
    super(code, message);
  }
}

/** A SessionView plus the store's revision (the optimistic-concurrency token for `send --revision`). */
export type ViewJson = SessionView & { revision: number | undefined };

export function viewJson(view: SessionView, revision: number | undefined): ViewJson {
  return { ...view, revision };
}

export interface CliContext {
  /** An SQLite file path or a postgres:// URL (see src/store/open-store.ts). */
  readonly dbPath: string;
  readonly store: SessionStore;
  /** Built on first use (see openContext): a PackageError or a bad setting of the runtime is thrown here then. */
  readonly runtime: Runtime;
  /** The runtime if a command has used it, else undefined (nothing to stop). */
  builtRuntime(): Runtime | undefined;
  readonly model: Model;
  close(): Promise<void>;
}

export function resolveDbPath(options: GlobalOptions, io: CliIo): string {
  return resolveStoreLocation(options.db, io.env, io.cwd);
}

const DEMO_PIECE_DELAY_MS = 15;

/**
 * The model chosen by the environment (`modelFromEnv`); the demo model when none is
 * configured. The OpenAI SDK is only loaded when it is needed: loading it is a noticeable
 * part of a command's start.
 */
export async function chooseModel(io: Pick<CliIo, 'env' | 'stdout'>): Promise<Model> {
  const { env } = io;
  // On a terminal the demo's streamed replies pause between pieces, so a person sees drafts grow.
  const demo = () => new DemoModel(io.stdout.isTTY ? { pieceDelayMs: DEMO_PIECE_DELAY_MS } : {});
  if (!env.OPENAI_API_KEY?.trim() && !env.OPENAI_BASE_URL?.trim()) return demo();
  const { modelFromEnv } = await import('../models/openai-model.js');
  return modelFromEnv(env) ?? demo();
}

export interface ContextFlags {
  /** Never calls a model (show, list, log, new): the demo model, so a bad OPENAI_* setting cannot break it. */
  readOnly?: boolean;
  /** Only reads the store (show, list, log): opened read-only, never created; a missing file reads as empty. */
  readStore?: boolean;
  inspect?: RuntimeOptions['inspect'];
  /** The command, for the lease owner others are shown on PostgreSQL ("steward send on HOST pid N"). */
  command?: string;
  /** Webhook receivers (`steward serve --webhook`): the runtime writes their messages to the outbox. */
  webhooks?: RuntimeOptions['webhooks'];
  /** With webhooks: the decision links their messages carry (`steward serve` with named tokens and a link secret). */
  webhookLinks?: RuntimeOptions['webhookLinks'];
}

/**
 * `STEWARD_LEASE_MS`: how long the lease of a session this command runs lasts unrenewed
 * (PostgreSQL; default 30 s), i.e. how soon a server or `steward resume` may take over a
 * session this process left running when it died.
 */
export function leaseMsFromEnv(env: NodeJS.ProcessEnv): number | undefined {
  const value = env.STEWARD_LEASE_MS?.trim();
  if (!value) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 100)
    throw new CliError('usage', `STEWARD_LEASE_MS is ${quotedSetting(value)}: set it to a whole number of milliseconds ≥ 100, or unset it (default 30000).`);
  return n;
}

/** Opens the store; the runtime on it is built when first used. */
export async function openContext(
  options: GlobalOptions,
  io: CliIo,
  { readOnly = false, readStore = false, inspect, command, webhooks, webhookLinks }: ContextFlags = {},
): Promise<CliContext> {
  const dbPath = resolveDbPath(options, io);
  const leaseMs = leaseMsFromEnv(io.env);
  const packagesDir = packagesDirs(options, io.env, io.cwd);
  const model = readOnly || readStore ? new DemoModel() : await chooseModel(io);
  // Before the store opens, so a bad OTEL_TRACES_EXPORTER ends here; the reading commands run no session, so make no spans.
  const traces = readStore ? undefined : await tracesFromEnv(io);
  const store = await openStore(dbPath, { readOnly: readStore, env: io.env }).catch(async (error: unknown) => {
    await traces?.shutdown();
    throw error;
  });
  let limits: RuntimeOptions['limits'];
  try {
    limits = limitsFromEnv(io.env);
  } catch (error) {
    void store.close();
    await traces?.shutdown();
    throw error;
  }
  const runtimeOptions: RuntimeOptions = {
    model,
    store,
    packagesDir,
    limits,
    // The MCP servers' ${VAR} and PATH come from the command's environment; their stderr goes to its stderr.
    toolHost: { env: io.env, log: (line) => io.stderr.write(`${line}\n`) },
    leaseOwner: leaseOwnerName(`steward ${command ?? 'command'}`),
    ...(leaseMs !== undefined ? { leaseMs } : {}),
    ...(inspect ? { inspect } : {}),
    ...(traces ? { tracerProvider: traces.tracerProvider } : {}),
    ...(webhooks?.length ? { webhooks } : {}),
    ...(webhooks?.length && webhookLinks ? { webhookLinks } : {}),
  };
  // The runtime reads and checks every skill package of the folders (a good part of a
  // command's start), so it is built when the command first needs it: `list`, `log` and a
  // session id that is not in the store never do. A command that builds it fails the same way
  // as before, only later; the store and the traces are closed by close() either way.
  let runtime: Runtime | undefined;
  // The runtime's MCP servers (child processes) stop first: they would keep the process alive.
  // The spans are flushed last: after the sessions closed (their workflow spans end then) and whatever the store did.
  const close = async () => {
    try {
      await runtime?.close();
      await store.close?.();
    } finally {
      await traces?.shutdown();
    }
  };
  return {
    dbPath,
    store,
    model,
    close,
    get runtime() {
      return (runtime ??= createRuntime(runtimeOptions));
    },
    builtRuntime: () => runtime,
  };
}

/** Runs `fn` with a context and always closes the store (after the live sessions: their leases are given back first). */
export async function withContext<T>(options: GlobalOptions, io: CliIo, fn: (ctx: CliContext) => Promise<T>, flags?: ContextFlags): Promise<T> {
  const ctx = await openContext(options, io, flags);
  try {
    return await fn(ctx);
  } finally {
    const live = [...(ctx.builtRuntime()?.live.values() ?? [])];
    if (ctx.store.leases) await Promise.allSettled(live.map((session) => session.close()));
    else for (const session of live) session.stop();
    await ctx.close();
  }
}

/**
 * A stored session's view without starting it: nothing is invoked, so a session that was
 * saved mid-turn is shown as it is instead of running its model call again.
 */
export async function peekSession(ctx: CliContext, id: string): Promise<{ view: SessionView; revision: number }> {
  const stored = await ctx.store.load(id);
  if (!stored) throw new SessionNotFoundError(id, ctx.dbPath);
  return { view: storedView(ctx.runtime.machine, stored, ctx.runtime.packageVersionOnDisk), revision: stored.revision };
}

/**
 * A steward command to paste: `npx steward` when this one was started through npm (npx, npm
 * start: `steward` may not be on PATH then), else `steward`; `--db` only when the store is not
 * the built-in default (STEWARD_DB may not be set in the shell the command is pasted into).
 */
export function cliCommand(args: string, dbPath: string, io: Pick<CliIo, 'env' | 'cwd'>): string {
  const program = io.env.npm_command || io.env.npm_lifecycle_event ? 'npx steward' : 'steward';
  const isDefault = dbPath === defaultDbPath({}, io.cwd);
  // A PostgreSQL URL is shown with PASSWORD in place of its password: never echoed.
  const shown = isPostgresUrl(dbPath) ? redactUrl(dbPath, 'PASSWORD') : dbPath;
  return `${program} ${args}${isDefault ? '' : ` --db ${shellQuote(shown)}`}`;
}

/** The exact command that continues a session. */
export function resumeCommand(id: string, dbPath: string, io: Pick<CliIo, 'env' | 'cwd'>): string {
  return cliCommand(`run --session ${id}`, dbPath, io);
}

export function shellQuote(text: string): string {
  return /^[\w./:@%+=,-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * A text option that may come from a file or stdin: `--text TEXT`, `--text -` (stdin) or
 * `--text-file FILE` (long text does not fit a command line). Undefined when neither is given.
 */
/** Commander collector for a repeatable option (`--edit a --edit b`). */
export const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

/** A file's text for an option (`--text-file`), with the usual messages. */
export function readTextFile(io: CliIo, option: string, file: string): string {
  return readTextFrom(option, resolve(io.cwd, file));
}

export async function readTextOption(io: CliIo, option: string, value: string | undefined, file: string | undefined): Promise<string | undefined> {
  if (value !== undefined && file !== undefined) throw new CliError('usage', `--${option} and --${option}-file both give the ${option}; use one of them.`);
  if (file !== undefined) return readTextFrom(`--${option}-file`, resolve(io.cwd, file));
  if (value !== '-') return value;
  // The process's stdin is read as its file descriptor (it may be a file, a pipe or closed); another stream to its end.
  if (io.stdin === process.stdin) return readTextFrom(`--${option} -`, 0);
  try {
    return await text(io.stdin);
  } catch (error) {
    throw new CliError('usage', `Cannot read --${option} - from stdin: ${(error as Error).message}.`);
  }
}

function readTextFrom(what: string, source: string | 0): string {
  try {
    return readFileSync(source, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason =
      code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a folder' : code === 'EACCES' ? 'permission denied' : (error as Error).message;
    throw new CliError('usage', source === 0 ? `Cannot read ${what} from stdin: ${reason}.` : `Cannot read ${what} "${source}": ${reason}.`);
  }
}

export function printJson(io: CliIo, value: unknown): void {
  // JSON.stringify leaves C1 and bidi controls raw; safeJson escapes them losslessly.
  io.stdout.write(`${safeJson(JSON.stringify(value, null, 2))}\n`);
}

/**
 * The parser of a session id argument or option: the id rule (src/ids.ts). It throws the
 * library's InvalidSessionIdError, not commander's error, so the message is printed
 * through safe-text like every other (commander would echo the raw value).
 */
export function sessionIdArgument(what: string) {
  return (text: string): string => checkSessionId(text, what);
}

/** Commander argument parser for whole numbers ≥ 1 (--max-burst-tokens) or ≥ 0 (--after). */
export function wholeNumber(min: number, max = Number.MAX_SAFE_INTEGER) {
  return (text: string): number => {
    const n = Number(text);
    if (!Number.isInteger(n) || n < min || n > max) {
      throw new InvalidArgumentError(
        `must be a whole number ${max === Number.MAX_SAFE_INTEGER ? `≥ ${min}` : `from ${min} to ${max}`}, got ${quotedSetting(text)}.`,
      );
    }
    return n;
  };
}

/** Commander argument parser for --max-burst: a whole number from 1 to MAX_BURST_LIMIT, the library's rule. */
export function maxBurstArgument(text: string): number {
  const n = wholeNumber(1)(text);
  if (n > MAX_BURST_LIMIT) throw new InvalidArgumentError(`${n} rounds is too many; ${MAX_BURST_ADVICE}`);
  return n;
}
