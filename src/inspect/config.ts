/**
 * `stately.config.json`: Steward's own format (Stately publishes none). It names the
 * machines that `steward diagram` draws and the inspector shows, the local inspector's
 * host and port, the inspect mode used when `--inspect` is not given, and the folders of
 * skill packages every command loads when neither `--packages` nor STEWARD_PACKAGES is set.
 *
 * @example
 * {
 *   "machines": [{ "name": "session", "source": "src/core/machines/session.machine.ts#sessionMachine" }],
 *   "inspector": { "host": "127.0.0.1", "port": 4747 },
 *   "inspect": "off",
 *   "packages": ["./packages"]
 * }
 */
import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isSourceModule, stewardRoot } from '../package-root.js';
import type { AnyStateMachine } from 'xstate';
import * as z from 'zod';
import { UserError } from '../core/errors.js';

export const STATELY_CONFIG_FILE = 'stately.config.json';
const STEWARD_ROOT = stewardRoot(import.meta.url);
/** Steward's own machine, from the sources (tests, tsx) or from the build (an installed package ships only dist/). */
const OWN_MACHINE = isSourceModule(import.meta.url)
  ? 'src/core/machines/session.machine.ts#sessionMachine'
  : 'dist/core/machines/session.machine.js#sessionMachine';
export const DEFAULT_INSPECTOR_PORT = 4747;

/** off: no inspection · local: Steward's inspector page · stately: Stately's online inspector · ws://…: any WebSocket inspector. */
export type InspectMode = 'off' | 'local' | 'stately' | `ws://${string}` | `wss://${string}`;

const MachineRef = z
  .string()
  .regex(/^[^#]+#[A-Za-z_$][\w$]*$/, 'must be "path/to/file.ts#exportName", e.g. "src/core/machines/session.machine.ts#sessionMachine"');

const InspectModeSchema = z.union([
  z.enum(['off', 'local', 'stately']),
  z.string().regex(/^wss?:\/\/[^\s]+$/, 'must be "off", "local", "stately" or a ws:// / wss:// URL'),
]);

export const StatelyConfigSchema = z.strictObject({
  $schema: z.string().optional(),
  machines: z
    .array(
      z.strictObject({
        /** A short name for `steward diagram --machine NAME`. */
        name: z.string().regex(/^[\w-]+$/, 'must be letters, digits, "_" or "-"'),
        /** "file#export": the module (relative to the config file) and the export holding the machine. */
        source: MachineRef,
        /** Drawn by `steward diagram` (default true). */
        draw: z.boolean().default(true),
      }),
    )
    .min(1, 'must list at least one machine')
    .refine((list) => new Set(list.map((m) => m.name)).size === list.length, 'machine names must be unique')
    // Absolute: a config that lists no machines (only "packages", say) is resolved against its own folder.
    .default([{ name: 'session', source: join(STEWARD_ROOT, OWN_MACHINE), draw: true }]),
  inspector: z
    .strictObject({
      host: z.string().min(1, 'must not be empty').default('127.0.0.1'),
      /** 0 picks a free port. */
      port: z.number().int('must be a whole number').min(0, 'must be 0–65535').max(65535, 'must be 0–65535').default(DEFAULT_INSPECTOR_PORT),
    })
    .default({ host: '127.0.0.1', port: DEFAULT_INSPECTOR_PORT }),
  inspect: InspectModeSchema.default('off'),
  /** Folders of skill packages for every command (relative to the config file), beside the bundled ones. */
  packages: z.array(z.string().min(1, 'must not be empty').max(4096, 'must be at most 4096 characters')).max(100, 'lists at most 100 folders').optional(),
});

export type StatelyConfig = z.infer<typeof StatelyConfigSchema> & { inspect: InspectMode };

export interface LoadedStatelyConfig {
  config: StatelyConfig;
  /** The file read, or null when there is none and the defaults apply. */
  path: string | null;
  /** The folder machine sources are resolved against. */
  dir: string;
}

function describeIssues(file: string, error: z.ZodError): string {
  const lines = error.issues.slice(0, 5).map((issue) => {
    const field =
      issue.path
        .map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`))
        .join('')
        .replace(/^\./, '') || '(root)';
    return `  ${field}: ${issue.message}`;
  });
  return `${file} is not valid:\n${lines.join('\n')}\nSee the format in src/inspect/config.ts.`;
}

/**
 * Validates a parsed config object; errors name the file and each wrong field.
 *
 * @example
 * const config = parseStatelyConfig(JSON.parse(text), 'my-config.json'); // a UserError names the field
 */
export function parseStatelyConfig(value: unknown, file = STATELY_CONFIG_FILE): StatelyConfig {
  const parsed = StatelyConfigSchema.safeParse(value);
  if (!parsed.success) throw new UserError(describeIssues(file, parsed.error));
  return parsed.data as StatelyConfig;
}

/**
 * Reads `stately.config.json` in `cwd`; without one, the defaults apply.
 *
 * @example
 * const { config, path } = loadStatelyConfig(); // stately.config.json of the working directory, or the defaults
 * console.log(config.inspect, config.inspector.port, path);
 */
export function loadStatelyConfig(cwd: string = process.cwd()): LoadedStatelyConfig {
  const path = join(cwd, STATELY_CONFIG_FILE);
  // Without a config file the defaults name Steward's own machine: resolve it from Steward's
  // package root, not from wherever the command runs.
  if (!existsSync(path)) return { config: parseStatelyConfig({}), path: null, dir: STEWARD_ROOT };
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new UserError(`${path} is not valid JSON: ${error instanceof Error ? error.message : String(error)}.`);
  }
  return { config: parseStatelyConfig(raw, path), path, dir: cwd };
}

/** Splits "src/x.ts#name" into its file and export. */
export function parseMachineRef(ref: string): { file: string; exportName: string } {
  const at = ref.lastIndexOf('#');
  if (at <= 0 || at === ref.length - 1) throw new UserError(`Machine source "${ref}" must be "path/to/file.ts#exportName".`);
  return { file: ref.slice(0, at), exportName: ref.slice(at + 1) };
}

const isMachine = (value: unknown): value is AnyStateMachine =>
  !!value && typeof value === 'object' && 'root' in value && typeof (value as { transition?: unknown }).transition === 'function';

/**
 * Registers tsx once, when a machine source is TypeScript: the compiled CLI does not load
 * a TypeScript compiler at start, only when a config names a .ts machine.
 */
let typescriptLoader: Promise<void> | undefined;
function loadTypeScript(ref: string): Promise<void> {
  typescriptLoader ??= (async () => {
    let api: { register: () => unknown };
    try {
      api = (await import('tsx/esm/api')) as typeof api;
    } catch (error) {
      typescriptLoader = undefined;
      throw new UserError(
        `Machine source "${ref}" is TypeScript: install tsx in your project (npm install --save-dev tsx), or point the source at compiled JavaScript.`,
        { cause: error },
      );
    }
    api.register();
  })();
  return typescriptLoader;
}

/**
 * Imports a machine named by "file#export" (relative to `dir`); .ts sources go through tsx.
 *
 * @example
 * const machine = await loadMachine('./src/app-machine.ts#appMachine');
 * console.log(renderDiagram(machine, 'mermaid'));
 */
export async function loadMachine(ref: string, dir: string = process.cwd()): Promise<AnyStateMachine> {
  const { file, exportName } = parseMachineRef(ref);
  const path = isAbsolute(file) ? file : resolve(dir, file);
  if (!existsSync(path)) throw new UserError(`Machine source "${ref}": ${path} does not exist.`);
  if (/\.[cm]?tsx?$/.test(path) && !import.meta.url.endsWith('.ts')) await loadTypeScript(ref);
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(path).href)) as Record<string, unknown>;
  } catch (error) {
    throw new UserError(`Machine source "${ref}" could not be imported: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  const machine = mod[exportName];
  if (!isMachine(machine)) {
    const exported = Object.keys(mod).filter((k) => isMachine(mod[k]));
    throw new UserError(
      `Machine source "${ref}": ${file} has no machine exported as "${exportName}"${exported.length ? `; machines exported there: ${exported.join(', ')}` : ''}.`,
    );
  }
  return machine;
}
