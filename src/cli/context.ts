/**
 * What every command shares: the store (--db, STEWARD_DB, default .steward/steward.db),
 * the model (OPENAI_* from the environment, else the offline demo model), the runtime,
 * a read-only look at a stored session, and the failures commands end with.
 */
import { InvalidArgumentError } from 'commander';
import { SessionNotFoundError, StewardError } from '../errors.js';
import { DemoModel } from '../models/demo-model.js';
import type { Model } from '../models/model.js';
import { storedSnapshot } from '../runtime/persisted.js';
import { createRuntime, type Runtime, type RuntimeOptions } from '../runtime/runtime.js';
import { sessionView, type SessionView } from '../runtime/view.js';
import { defaultDbPath, SqliteStore } from '../store/sqlite-store.js';
import { safeJson } from './safe-text.js';

/** Options every command inherits from the program. */
export interface GlobalOptions {
  db?: string;
}

/** A failure a command ends with: a stable code (as in StewardError) and a message for humans. */
export class CliError extends StewardError {
  constructor(code: string, message: string) {
    super(code, message);
  }
}

/** A SessionView plus the store's revision (the optimistic-concurrency token for `send --revision`). */
export type ViewJson = SessionView & { revision: number | undefined };

export function viewJson(view: SessionView, revision: number | undefined): ViewJson {
  return { ...view, revision };
}

export interface CliContext {
  readonly dbPath: string;
  readonly store: SqliteStore;
  readonly runtime: Runtime;
  readonly model: Model;
  close(): Promise<void>;
}

export function resolveDbPath(options: GlobalOptions): string {
  return options.db ? defaultDbPath({ STEWARD_DB: options.db }) : defaultDbPath();
}

/**
 * The model chosen by the environment (`modelFromEnv`); the demo model when none is
 * configured. The OpenAI SDK is only loaded when it is needed: it costs ~0.3 s at startup.
 */
export async function chooseModel(env: NodeJS.ProcessEnv = process.env): Promise<Model> {
  if (!env.OPENAI_API_KEY?.trim() && !env.OPENAI_BASE_URL?.trim()) return new DemoModel();
  const { modelFromEnv } = await import('../models/openai-model.js');
  return modelFromEnv(env) ?? new DemoModel();
}

/**
 * Opens the store and a runtime on it. Commands that never call a model (show, list, log)
 * pass `readOnly` and get the demo model, so a bad OPENAI_* setting cannot break them.
 */
export async function openContext(options: GlobalOptions, { readOnly = false, inspect }: { readOnly?: boolean; inspect?: RuntimeOptions['inspect'] } = {}): Promise<CliContext> {
  const dbPath = resolveDbPath(options);
  const model = readOnly ? new DemoModel() : await chooseModel();
  const store = new SqliteStore(dbPath);
  let runtime: Runtime;
  try {
    runtime = createRuntime({ model, store, ...(inspect ? { inspect } : {}) });
  } catch (error) {
    void store.close();
    throw error;
  }
  return { dbPath, store, runtime, model, close: () => store.close() };
}

/** Runs `fn` with a context and always closes the store. */
export async function withContext<T>(options: GlobalOptions, fn: (ctx: CliContext) => Promise<T>, flags?: { readOnly?: boolean; inspect?: RuntimeOptions['inspect'] }): Promise<T> {
  const ctx = await openContext(options, flags);
  try {
    return await fn(ctx);
  } finally {
    for (const session of ctx.runtime.live.values()) session.stop();
    await ctx.close();
  }
}

/**
 * A stored session's view without starting it: nothing is invoked, so a session that was
 * saved mid-turn is shown as it is instead of running its model call again.
 */
export async function peekSession(ctx: CliContext, id: string): Promise<{ view: SessionView; revision: number }> {
  const stored = await ctx.store.load(id);
  if (!stored) throw new SessionNotFoundError(id);
  return { view: sessionView(storedSnapshot(ctx.runtime.machine, stored)), revision: stored.revision };
}

/** The exact command that continues a session, with --db when the store is not the default one. */
export function resumeCommand(id: string, dbPath: string): string {
  // Without --db, `steward run` opens the built-in default (STEWARD_DB may not be set then).
  const isDefault = dbPath === defaultDbPath({});
  return `npx steward run --session ${id}${isDefault ? '' : ` --db ${shellQuote(dbPath)}`}`;
}

export function shellQuote(text: string): string {
  return /^[\w./:@%+=,-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

export function printJson(value: unknown): void {
  // JSON.stringify leaves C1 and bidi controls raw; safeJson escapes them losslessly.
  process.stdout.write(`${safeJson(JSON.stringify(value, null, 2))}\n`);
}

/** Commander argument parser for whole numbers ≥ 1 (--max-burst) or ≥ 0 (--after). */
export function wholeNumber(min: number, max = Number.MAX_SAFE_INTEGER) {
  return (text: string): number => {
    const n = Number(text);
    if (!Number.isInteger(n) || n < min || n > max) {
      throw new InvalidArgumentError(`must be a whole number ${max === Number.MAX_SAFE_INTEGER ? `≥ ${min}` : `from ${min} to ${max}`}, got "${text}".`);
    }
    return n;
  };
}
