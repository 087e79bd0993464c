/**
 * The bearer tokens of an HTTP server, as the operator gives them: one shared secret
 * (`STEWARD_TOKEN`, whose holders are indistinguishable) or named tokens (`STEWARD_TOKENS`
 * or `STEWARD_TOKENS_FILE`), so that the server knows *who* called, not only that the
 * caller knows a secret.
 *
 * The list, one entry a line (in `STEWARD_TOKENS` a `;` also ends an entry):
 *
 *     # name    token                              options
 *     alice     3f0c9a…(16+ characters)
 *     ci-bot    b8e41d…                            act-for-others
 *     olga      77d0e2…                            groups=ops,admin
 *
 * Blank lines and lines starting with `#` are skipped. `act-for-others` lets a token record
 * another name as the `by` of an event (a front end acting for its users); the journal then
 * also records the token's name (`via`). `groups=a,b` puts the caller in groups: a session
 * naming `group:a` as a participant is theirs to see and decide too, and the `admin` group sees
 * every session (src/http/access.ts).
 */
import { readFileSync, statSync } from 'node:fs';
import * as z from 'zod';
import { UserError } from '../core/errors.js';
import { RESERVED_ACTOR_NAMES } from '../runtime/reserved-names.js';
import { foldName } from '../core/text/names.js';
import { MAX_CALLER_GROUPS } from '../store/participants.js';

/** A token long enough that guessing it is hopeless (e.g. `openssl rand -hex 24`: 48 characters). */
export const MIN_TOKEN_CHARS = 16;
const MAX_TOKEN_CHARS = 512;
/** More than any operator types; bounds what a wrong path (a log, a binary) makes us read. */
const MAX_LIST_BYTES = 256 * 1024;
const MAX_NAME_CHARS = 64;
export const ACT_FOR_OTHERS = 'act-for-others';
/** The option that puts a token's caller in groups: `groups=ops,admin`. */
const GROUPS_OPTION = 'groups=';

/** The caller name of the one shared STEWARD_TOKEN: it names the secret, not a person. */
export const SHARED_TOKEN_NAME = 'token';

export interface NamedToken {
  name: string;
  token: string;
  /** May record another name as the `by` of an event (the journal keeps the token's name as `via`). */
  actForOthers: boolean;
  /** The caller's groups (`groups=ops,admin`): sessions naming `group:ops` are theirs too; `admin` sees every session. Absent: none. */
  groups?: readonly string[];
}

/** How a server checks its callers. */
export type ServeTokens = { kind: 'none' } | { kind: 'shared'; token: string } | { kind: 'named'; tokens: readonly NamedToken[] };

/**
 * A token list with problems: each names its line and the fix (never the token itself: it is a secret).
 *
 * @example
 * try { parseTokenList(text, 'tokens.txt'); } catch (error) { if (TokenListError.isInstance(error)) console.error(error.message); }
 */
export class TokenListError extends UserError {
  static override readonly errorName: string = 'TokenListError';
  /** `unit`: what `line` counts — lines of a file, or entries of STEWARD_TOKENS (where `;` separates too) or of an array. */
  constructor(
    readonly source: string,
    readonly problems: readonly { line: number; message: string }[],
    readonly unit: 'line' | 'entry' = 'line',
  ) {
    super(
      `${source} is not a valid token list:\n${problems.map((p) => `  ${unit} ${p.line}: ${p.message}`).join('\n')}\n` +
        `Each line is "name token" or "name token ${ACT_FOR_OTHERS}", and may add "groups=NAME,NAME" (e.g. groups=ops,admin) after the token; ` +
        'blank lines and lines starting with # are skipped.',
    );
  }
}

// The characters an `Authorization: Bearer` header can carry (RFC 6750's b64token): a token
// with any other would never match, however it was typed.
const TOKEN_CHARS = /^[A-Za-z0-9._~+/-]+=*$/;
const NAME_CHARS = /^[A-Za-z0-9][A-Za-z0-9._@-]*$/;

const Entry = z.strictObject({
  name: z
    .string()
    .max(MAX_NAME_CHARS, `the name is longer than ${MAX_NAME_CHARS} characters: use a shorter one`)
    .regex(NAME_CHARS, 'the name may use letters, digits and . _ @ - (starting with a letter or digit), e.g. alice or ci-bot')
    .refine(
      (n) => !RESERVED_ACTOR_NAMES.includes(foldName(n)),
      `the name is reserved (${RESERVED_ACTOR_NAMES.join(', ')} are the journal's names for the runtime): name the person or service that holds the token`,
    ),
  token: z
    .string()
    .min(MIN_TOKEN_CHARS, `the token is too short to be a secret: use at least ${MIN_TOKEN_CHARS} characters (e.g. \`openssl rand -hex 24\`)`)
    .max(MAX_TOKEN_CHARS, `the token is longer than ${MAX_TOKEN_CHARS} characters: use a shorter one`)
    .regex(TOKEN_CHARS, 'the token may use letters, digits and . _ ~ + / - (and = at its end), as `openssl rand -hex 24` or `openssl rand -base64 24` print'),
});

/** A group's name in a token list: a name's characters, e.g. ops or admin. */
const GroupName = z
  .string()
  .min(1, 'a group name is empty (two commas in a row, or one at an end): write groups=NAME,NAME, e.g. groups=ops,admin')
  .max(MAX_NAME_CHARS, `a group name is longer than ${MAX_NAME_CHARS} characters: use a shorter one`)
  .regex(NAME_CHARS, 'a group name may use letters, digits and . _ @ - (starting with a letter or digit), e.g. groups=ops,admin');

/** What follows the token on a line: `act-for-others` and `groups=…`, each at most once; the problems, never quoting a field (it may be a secret typed in the wrong place). */
function optionsOf(fields: readonly string[]): { actForOthers: boolean; groups: string[] | undefined; problems: string[] } {
  const problems: string[] = [];
  let actForOthers = false;
  let groups: string[] | undefined;
  for (const field of fields) {
    if (field === ACT_FOR_OTHERS) {
      if (actForOthers) problems.push(`give "${ACT_FOR_OTHERS}" at most once`);
      actForOthers = true;
    } else if (field.startsWith(GROUPS_OPTION)) {
      if (groups) {
        problems.push('give "groups=" at most once: list every group in it, e.g. groups=ops,admin');
        continue;
      }
      groups = groupsProblems(field.slice(GROUPS_OPTION.length).split(','), problems);
    } else problems.push(`the options after the token are "${ACT_FOR_OTHERS}" and "groups=NAME,NAME" (e.g. groups=ops,admin)`);
  }
  return { actForOthers, groups, problems };
}

/** The groups of a `groups=` list, checked: each a name, each once, at most MAX_CALLER_GROUPS; problems go to `problems`. */
function groupsProblems(names: readonly string[], problems: string[]): string[] {
  const checked: string[] = [];
  for (const name of names) {
    const parsed = GroupName.safeParse(name);
    if (!parsed.success) problems.push(parsed.error.issues[0]!.message);
    else if (checked.includes(name)) problems.push(`the group "${name}" is listed twice in groups=: list each group once`);
    else checked.push(name);
  }
  if (names.length > MAX_CALLER_GROUPS) problems.push(`groups= lists ${names.length} groups; a caller may be in at most ${MAX_CALLER_GROUPS}`);
  return checked;
}

/**
 * Parses a token list; `source` names it in errors (e.g. "STEWARD_TOKENS_FILE /etc/steward/tokens").
 * `semicolons`: a `;` ends an entry too (for an environment variable, which is one line).
 *
 * @example
 * const tokens = parseTokenList(readFileSync('tokens.txt', 'utf8'), 'tokens.txt'); // "alice 3f0c9a…" a line
 * const server = await startServe({ runtime, store, tokens });
 */
export function parseTokenList(text: string, source: string, options: { semicolons?: boolean } = {}): NamedToken[] {
  const entries: { line: number; fields: string[] }[] = [];
  // Blank and comment parts count too, so the number is the one the operator sees in the text.
  text.split(options.semicolons ? /\r?\n|;/ : /\r?\n/).forEach((raw, index) => {
    const trimmed = raw.trim();
    if (trimmed && !trimmed.startsWith('#')) entries.push({ line: index + 1, fields: trimmed.split(/\s+/) });
  });
  return checkEntries(entries, source, options.semicolons ? 'entry' : 'line');
}

/** Named tokens given as objects (`startServe({ tokens })`), held to the rules of a token list; `line` is the place in the array, from 1. */
export function checkNamedTokens(tokens: readonly NamedToken[], source: string): NamedToken[] {
  return checkEntries(
    tokens.map((t, i) => ({
      line: i + 1,
      fields: [t.name, t.token, ...(t.actForOthers ? [ACT_FOR_OTHERS] : [])],
      // As given (an array), not joined into a `groups=` field: a comma inside a name must not make two groups of it.
      ...(t.groups !== undefined ? { groups: t.groups } : {}),
    })),
    source,
    'entry',
  );
}

/** One caller of a list: its fields as typed (name, token, options), or, from objects, its groups as given. */
type ListEntry = { line: number; fields: readonly string[]; groups?: readonly unknown[] };

function checkEntries(entries: readonly ListEntry[], source: string, unit: 'line' | 'entry'): NamedToken[] {
  const problems: { line: number; message: string }[] = [];
  const tokens: NamedToken[] = [];
  const lineOfName = new Map<string, number>();
  const lineOfToken = new Map<string, number>();
  for (const { line, fields, groups: given } of entries) {
    if (fields.length < 2) {
      problems.push({ line, message: 'a name without a token: write "name token" (separated by a space)' });
      continue;
    }
    const [name, token, ...rest] = fields as [string, string, ...string[]];
    const parsed = Entry.safeParse({ name, token });
    const options = optionsOf(rest);
    if (given !== undefined) {
      if (!Array.isArray(given) || given.some((g) => typeof g !== 'string'))
        options.problems.push('groups must be an array of group names (strings), e.g. ["ops", "admin"]');
      else options.groups = groupsProblems(given as string[], options.problems);
    }
    if (!parsed.success || options.problems.length > 0) {
      for (const issue of parsed.error?.issues ?? []) problems.push({ line, message: issue.message });
      for (const message of options.problems) problems.push({ line, message });
      continue;
    }
    const sameName = lineOfName.get(name);
    const sameToken = lineOfToken.get(token);
    if (sameName !== undefined) problems.push({ line, message: `the name "${name}" is on ${unit} ${sameName} already: give each token its own name` });
    if (sameToken !== undefined)
      problems.push({ line, message: `the token of ${unit} ${sameToken} again: give each name its own token, or one name could pass for another` });
    if (sameName !== undefined || sameToken !== undefined) continue;
    lineOfName.set(name, line);
    lineOfToken.set(token, line);
    tokens.push({ name, token, actForOthers: options.actForOthers, ...(options.groups?.length ? { groups: options.groups } : {}) });
  }
  if (problems.length) throw new TokenListError(source, problems, unit);
  if (!tokens.length)
    throw new UserError(`${source} has no tokens: add a line "name token" for each caller (e.g. \`echo "alice $(openssl rand -hex 24)"\`), or unset it.`);
  return tokens;
}

/**
 * The tokens the environment configures: `STEWARD_TOKENS_FILE` (a file) or `STEWARD_TOKENS`
 * (the list itself), or the one shared `STEWARD_TOKEN`; at most one of the three.
 *
 * @example
 * const env = tokensFromEnv(); // STEWARD_TOKEN, STEWARD_TOKENS or STEWARD_TOKENS_FILE
 * const server = await startServe({ runtime, store, ...(env.kind === 'named' ? { tokens: env.tokens } : env.kind === 'shared' ? { token: env.token } : {}) });
 */
export function tokensFromEnv(env: NodeJS.ProcessEnv = process.env): ServeTokens {
  const file = env.STEWARD_TOKENS_FILE?.trim() || undefined;
  const list = env.STEWARD_TOKENS?.trim() || undefined;
  const shared = env.STEWARD_TOKEN?.trim() || undefined;
  const set = [file && 'STEWARD_TOKENS_FILE', list && 'STEWARD_TOKENS', shared && 'STEWARD_TOKEN'].filter(Boolean);
  if (set.length > 1)
    throw new UserError(
      `${set.length === 2 ? `${set[0]} and ${set[1]} are both set` : `${set.slice(0, -1).join(', ')} and ${set.at(-1)} are all set`}: set one of them (named tokens: STEWARD_TOKENS_FILE or STEWARD_TOKENS; one shared secret: STEWARD_TOKEN).`,
    );
  if (file) return { kind: 'named', tokens: parseTokenList(readTokenFile(file), `STEWARD_TOKENS_FILE ${file}`) };
  if (list) return { kind: 'named', tokens: parseTokenList(list, 'STEWARD_TOKENS', { semicolons: true }) };
  if (shared) return { kind: 'shared', token: shared };
  return { kind: 'none' };
}

function readTokenFile(path: string): string {
  let size: number;
  try {
    size = statSync(path).size;
  } catch (error) {
    throw new UserError(
      `STEWARD_TOKENS_FILE ${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}): ` +
        `give the path of a file with one "name token" line per caller.`,
    );
  }
  if (size > MAX_LIST_BYTES)
    throw new UserError(`STEWARD_TOKENS_FILE ${path} has ${size} bytes, more than a token list (${MAX_LIST_BYTES}): is it the right file?`);
  return readFileSync(path, 'utf8');
}

/** A shared token's own check (the named ones are checked by parseTokenList). */
export function checkSharedToken(token: string): void {
  if (token.length < MIN_TOKEN_CHARS)
    throw new UserError(`STEWARD_TOKEN is too short to be a secret: use at least ${MIN_TOKEN_CHARS} characters (e.g. \`openssl rand -hex 24\`).`);
  if (!TOKEN_CHARS.test(token))
    throw new UserError(
      'STEWARD_TOKEN has characters an Authorization header cannot carry: use letters, digits and . _ ~ + ' +
        '/ - (and = at its end), as `openssl rand -hex 24` prints.',
    );
}

/**
 * Refuses a token named as a worker of one of `packages`: the session refuses a worker's id
 * as `by`, so every event that token sent would be refused. Said at start, not per event.
 */
export function checkTokenNamesAgainstWorkers(tokens: readonly NamedToken[], packages: Iterable<{ id: string; workers: readonly { id: string }[] }>): void {
  const workers = new Map<string, string>();
  for (const pkg of packages) for (const worker of pkg.workers) workers.set(foldName(worker.id), `${pkg.id}/${worker.id}`);
  const clashes = tokens.filter((t) => workers.has(foldName(t.name))).map((t) => `"${t.name}" (the worker ${workers.get(foldName(t.name))})`);
  if (clashes.length > 0) {
    throw new UserError(
      `Token names ${clashes.join(', ')} are worker ids: the journal uses them for what those workers ` +
        `wrote, so every event these tokens sent would be refused. Rename the tokens (a person's or ` +
        `service's name).`,
    );
  }
}
