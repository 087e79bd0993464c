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
 *
 * Blank lines and lines starting with `#` are skipped. `act-for-others` lets a token record
 * another name as the `by` of an event (a front end acting for its users); the journal then
 * also records the token's name (`via`).
 */
import { readFileSync, statSync } from 'node:fs';
import * as z from 'zod';
import { UserError } from '../core/errors.js';
import { RESERVED_ACTOR_NAMES } from '../runtime/reserved-names.js';
import { foldName } from '../core/text/names.js';

/** A token long enough that guessing it is hopeless (e.g. `openssl rand -hex 24`: 48 characters). */
export const MIN_TOKEN_CHARS = 16;
const MAX_TOKEN_CHARS = 512;
/** More than any operator types; bounds what a wrong path (a log, a binary) makes us read. */
const MAX_LIST_BYTES = 256 * 1024;
const MAX_NAME_CHARS = 64;
export const ACT_FOR_OTHERS = 'act-for-others';

/** The caller name of the one shared STEWARD_TOKEN: it names the secret, not a person. */
export const SHARED_TOKEN_NAME = 'token';

export interface NamedToken {
  name: string;
  token: string;
  /** May record another name as the `by` of an event (the journal keeps the token's name as `via`). */
  actForOthers: boolean;
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
        `Each line is "name token" or "name token ${ACT_FOR_OTHERS}"; blank lines and lines starting with # are skipped.`,
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
  options: z.array(z.literal(ACT_FOR_OTHERS, `the only option after the token is "${ACT_FOR_OTHERS}"`)).max(1, `give "${ACT_FOR_OTHERS}" at most once`),
});

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
    tokens.map((t, i) => ({ line: i + 1, fields: [t.name, t.token, ...(t.actForOthers ? [ACT_FOR_OTHERS] : [])] })),
    source,
    'entry',
  );
}

function checkEntries(entries: readonly { line: number; fields: readonly string[] }[], source: string, unit: 'line' | 'entry'): NamedToken[] {
  const problems: { line: number; message: string }[] = [];
  const tokens: NamedToken[] = [];
  const lineOfName = new Map<string, number>();
  const lineOfToken = new Map<string, number>();
  for (const { line, fields } of entries) {
    if (fields.length < 2) {
      problems.push({ line, message: 'a name without a token: write "name token" (separated by a space)' });
      continue;
    }
    const [name, token, ...rest] = fields as [string, string, ...string[]];
    const parsed = Entry.safeParse({ name, token, options: rest });
    if (!parsed.success) {
      for (const issue of parsed.error.issues) problems.push({ line, message: issue.message });
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
    tokens.push({ name, token, actForOthers: parsed.data.options.length > 0 });
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
