/**
 * `${VAR}` in a server's configuration, expanded when the server starts from the environment
 * the host was given: a package holds the reference, never the value. Every value put in is
 * remembered as a secret, so that the host can hide it in whatever leaves it (errors, log
 * lines, tool results): a server that echoes its token back, or an SDK error that quotes a
 * URL, must not show it.
 */
import { isStdioServer, type McpServerConfig } from '../core/skills/mcp-servers.js';
import { McpVariableError } from './errors.js';

/** `${NAME}`: the only form expanded; anything else (`$NAME`, `${A:-b}`) stays as written. */
const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** Secrets shorter than this are not hidden in text: a 2-letter value would mask ordinary words. */
const MIN_SECRET_LENGTH = 4;

export type Environment = Readonly<Record<string, string | undefined>>;

/** A server as it starts: every `${VAR}` replaced, and the values that replaced them. */
export type ExpandedServer =
  | { kind: 'stdio'; command: string; args: string[]; env: Record<string, string>; cwd?: string; secrets: Secrets }
  | { kind: 'http'; url: string; headers: Record<string, string>; secrets: Secrets };

/** The values put into a server's configuration, and how to hide them in text. */
export interface Secrets {
  /** `text` with every secret replaced by `[value of NAME]`. */
  hide(text: string): string;
}

/**
 * `config` with every `${VAR}` replaced from `env`; a variable `env` lacks is an
 * McpVariableError naming it, the field and the server (never a value).
 *
 * @example
 * const server = expandServer('github', { url: 'https://example.com/mcp', headers: { Authorization: 'Bearer ${TOKEN}' }, trusted: true }, { TOKEN: 't0ken' });
 * server.kind === 'http' && server.headers.Authorization; // 'Bearer t0ken'
 * server.secrets.hide('rejected t0ken'); // 'rejected [value of TOKEN]'
 */
export function expandServer(name: string, config: McpServerConfig, env: Environment): ExpandedServer {
  const used = new Map<string, string>();
  const expand = (value: string, field: string): string =>
    value.replace(VARIABLE, (_match, variable: string) => {
      const found = Object.hasOwn(env, variable) ? env[variable] : undefined;
      if (found === undefined) throw new McpVariableError(name, variable, field);
      used.set(found, variable);
      // As a URL or a header may carry it, percent-encoded (an SDK's error may quote the URL).
      used.set(encodeURIComponent(found), variable);
      return found;
    });
  const expandRecord = (record: Readonly<Record<string, string>> | undefined, field: string) =>
    Object.fromEntries(Object.entries(record ?? {}).map(([key, value]) => [key, expand(value, `${field}.${key}`)]));

  if (isStdioServer(config)) {
    const expanded = {
      command: expand(config.command, 'command'),
      args: (config.args ?? []).map((arg, i) => expand(arg, `args[${i}]`)),
      env: expandRecord(config.env, 'env'),
      ...(config.cwd !== undefined ? { cwd: expand(config.cwd, 'cwd') } : {}),
    };
    return { kind: 'stdio', ...expanded, secrets: secretsOf(used) };
  }
  const url = expand(config.url, 'url');
  const headers = expandRecord(config.headers, 'headers');
  return { kind: 'http', url, headers, secrets: secretsOf(used) };
}

/** Longest first, so a secret that contains another is hidden whole. */
function secretsOf(used: ReadonlyMap<string, string>): Secrets {
  const values = [...used].filter(([value]) => value.length >= MIN_SECRET_LENGTH).sort(([a], [b]) => b.length - a.length);
  return {
    hide: (text) => values.reduce((out, [value, variable]) => out.split(value).join(`[value of ${variable}]`), text),
  };
}
