/**
 * The HTTP guards of `steward serve` and the inspector, in one place. A web page in a
 * browser can send requests to a server on this machine; these checks make sure it can
 * neither read an answer nor change anything:
 *
 * - Host: must name the address the server listens on, or a name the operator allowed. A
 *   page whose own name resolves to 127.0.0.1 (DNS rebinding) is same-origin for its
 *   browser, so only the Host header it sends tells it apart: 403.
 * - Origin: a browser names the page behind every cross-origin request (and every POST);
 *   only the server's own origin and the allowed ones pass (`Origin: null`, sent by
 *   sandboxed frames and local files, never does): 403.
 * - Content type: a body must be `Content-Type: application/json`. A browser sends
 *   text/plain, form and multipart bodies to another site without asking it first (no CORS
 *   preflight), so accepting them would let a page write blind: 415.
 *
 * A route may take a form body instead (`takesForm`, set before the guards: serve's decision
 * link, whose page is a plain HTML form with no script); such a route refuses a post from
 * another site's page itself, from the Origin and Sec-Fetch-Site headers a browser sends.
 *
 * A refusal is an HttpError (./errors.ts): both apps answer it in the one error shape.
 */
import { networkInterfaces } from 'node:os';
import type { MiddlewareHandler } from 'hono';
import * as z from 'zod';
import { UserError } from '../core/errors.js';
import { HttpError } from './errors.js';

declare module 'hono' {
  interface ContextVariableMap {
    /** The request's route takes a URL-encoded form body (its declaration says so): the content-type guard lets one pass. */
    takesForm: boolean | undefined;
  }
}

export interface RequestGuardOptions {
  /**
   * The address the server listens on, once it does (until then every request is refused).
   * None (an app that mounts the routes in its own server): only `allowedHosts` pass, and
   * with none of those either the Host is the app's business.
   */
  listening?: () => { host: string; port: number } | undefined;
  /** More Host names that reach this server (a proxy's, a DNS name): `name` (any port) or `name:port`. */
  allowedHosts?: readonly string[];
  /** Origins (`scheme://host[:port]`) whose pages may call this server, besides its own. */
  allowedOrigins?: readonly string[];
  /** What to tell a client whose Host is refused, e.g. "start serve with --allow-host NAME". */
  hostFix: (hostname: string) => string;
  /** What to tell a page whose Origin is refused. */
  originFix: string;
}

/** The loopback names a server on this machine only can be reached by. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

/** A bind to every interface. */
export function isWildcard(host: string): boolean {
  return host === '0.0.0.0' || host === '::' || host === '';
}

const bracketed = (address: string) => (address.includes(':') ? `[${address}]` : address);

/**
 * The Host values (lowercase, `host:port`) that name a server listening on `host`:`port`.
 * Loopback: its own address and the loopback names. Every interface (0.0.0.0, ::): each
 * interface address of this machine, and the loopback names.
 */
export function listeningHosts(host: string, port: number): Set<string> {
  const names = new Set<string>([host]);
  if (isLoopback(host) || isWildcard(host)) for (const name of ['127.0.0.1', 'localhost', '::1']) names.add(name);
  if (isWildcard(host)) {
    for (const addresses of Object.values(networkInterfaces())) {
      for (const { address } of addresses ?? []) names.add(address);
    }
  }
  names.delete('');
  const hosts = new Set<string>();
  for (const name of names) {
    const shown = bracketed(name.toLowerCase());
    hosts.add(`${shown}:${port}`);
    // A browser leaves out the port when it is the scheme's default.
    if (port === 80) hosts.add(shown);
  }
  return hosts;
}

/** The name part of a Host value: `example.com:80` → `example.com`, `[::1]:80` → `[::1]`. */
function hostnameOf(host: string): string {
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1);
  const colon = host.lastIndexOf(':');
  return colon < 0 ? host : host.slice(0, colon);
}

/** A body arrives when a length above zero is declared, or when it is streamed (chunked). */
function hasBody(length: string | undefined, transferEncoding: string | undefined): boolean {
  return transferEncoding !== undefined || (length !== undefined && length.trim() !== '0');
}

const mediaType = (contentType: string | undefined): string => (contentType ?? '').split(';')[0]!.trim().toLowerCase();
/** Whether a Content-Type header names JSON (parameters such as charset aside). */
export const isJson = (contentType: string | undefined): boolean => mediaType(contentType) === 'application/json';
const isForm = (contentType: string | undefined): boolean => mediaType(contentType) === 'application/x-www-form-urlencoded';

const HOST_PATTERN = String.raw`(\[[0-9a-f:.]+\]|[a-z0-9_.-]+)(:\d{1,5})?`;
const AllowedHost = z
  .string()
  .trim()
  .toLowerCase()
  .regex(new RegExp(`^${HOST_PATTERN}$`));
const AllowedOrigin = z
  .string()
  .trim()
  .toLowerCase()
  .transform((origin) => origin.replace(/\/$/, ''))
  .pipe(z.string().regex(new RegExp(`^https?://${HOST_PATTERN}$`)));

/** An Origin header as the guard compares it: lowercase, no trailing slash. */
export function normalizeOrigin(origin: string): string {
  return origin.trim().toLowerCase().replace(/\/$/, '');
}

/** The origins an operator listed (`--cors-origin`), checked and normalized; a malformed one is a UserError naming the form. */
export function parseOrigins(origins: readonly string[] | undefined): Set<string> {
  return parseList(AllowedOrigin, origins, 'The CORS origin', 'scheme://host[:port] (http://localhost:5173, https://app.example.com)');
}

function parseList(schema: z.ZodType<string>, values: readonly string[] | undefined, what: string, example: string): Set<string> {
  const parsed = new Set<string>();
  for (const value of values ?? []) {
    const result = schema.safeParse(value);
    if (!result.success) throw new UserError(`${what} ${JSON.stringify(value)} is not valid: write it as ${example}.`);
    parsed.add(result.data);
  }
  return parsed;
}

/** Host, Origin and content-type checks, in that order, before any route (and before the token). */
export function requestGuards(options: RequestGuardOptions): MiddlewareHandler {
  const allowedNames = parseList(
    AllowedHost,
    options.allowedHosts,
    'The allowed host',
    'a host name, optionally with its port (steward.example.com, 10.0.0.5:4800, [fd00::5])',
  );
  // `null` is no origin: it is what sandboxed frames and local files send, whoever they are.
  const allowedOrigins = parseOrigins(options.allowedOrigins);
  // Computed once the server listens (interface addresses are read once, not per request).
  let known: { port: number; host: string; hosts: Set<string> } | undefined;
  const serverHosts = (): Set<string> => {
    const at = options.listening?.();
    if (!at) return new Set();
    if (known?.port !== at.port || known.host !== at.host) known = { ...at, hosts: listeningHosts(at.host, at.port) };
    return known.hosts;
  };

  const checkHost = options.listening !== undefined || allowedNames.size > 0;
  return async (c, next) => {
    const host = (c.req.header('host') ?? '').trim().toLowerCase();
    if (checkHost && !serverHosts().has(host) && !allowedNames.has(host) && !allowedNames.has(hostnameOf(host))) {
      throw new HttpError(
        403,
        'forbidden_host',
        `Host ${JSON.stringify(host)} is not an address this server listens on: a page under another name ` +
          `(DNS rebinding) gets no answer. If clients reach this server by that name, ` +
          `${options.hostFix(hostnameOf(host) || 'NAME')}.`,
      );
    }
    const origin = c.req.header('origin');
    if (origin !== undefined) {
      const normalized = normalizeOrigin(origin);
      if (normalized !== `http://${host}` && !allowedOrigins.has(normalized)) {
        throw new HttpError(
          403,
          'forbidden_origin',
          `Requests from the page at ${JSON.stringify(origin)} are refused: this server answers no other site's pages. ${options.originFix}`,
        );
      }
    }
    const contentType = c.req.header('content-type');
    if (hasBody(c.req.header('content-length'), c.req.header('transfer-encoding')) && !isJson(contentType) && !(c.get('takesForm') && isForm(contentType))) {
      throw new HttpError(
        415,
        'unsupported_media_type',
        `A request body must be JSON sent with "Content-Type: application/json" (this one has ` +
          `${contentType === undefined ? 'no Content-Type' : JSON.stringify(contentType)}): set that header.`,
      );
    }
    await next();
  };
}
