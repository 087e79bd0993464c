/**
 * Request bodies of Steward's HTTP servers: JSON documents of a bounded size. The Host /
 * Origin / content-type guards (./security.ts) have already refused a body that is not
 * `Content-Type: application/json` (415) by the time a route reads one; `bodyLimit` refuses
 * one that is too large (413) before it is read, declared or streamed. A route reads its body
 * with `readJsonBody` before its declared schema validates it (./route.ts).
 */
import type { Context, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { errorResponse, HttpError } from './errors.js';

/** The middleware that answers 413 for a body over `maxSize` bytes. */
export function limitBody(maxSize: number): MiddlewareHandler {
  return bodyLimit({
    maxSize,
    onError: (c) => errorResponse(c, new HttpError(413, 'body_too_large', `The body is larger than ${maxSize} bytes, the limit of this server.`)),
  });
}

/** The JSON body, `emptyAs` when there is none (when given), or a 400 that says what is wrong. */
export async function jsonBody(c: Context, emptyAs?: unknown): Promise<unknown> {
  const text = await c.req.text();
  if (!text.trim()) {
    if (emptyAs !== undefined) return emptyAs;
    throw new HttpError(400, 'invalid_request', 'The request needs a JSON body (Content-Type: application/json).');
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new HttpError(400, 'invalid_request', `The body is not valid JSON: ${(error as Error).message}.`);
  }
}

/**
 * Route middleware: the JSON body read by `jsonBody`'s rules (an empty body is `emptyAs`, or a
 * 400 that says a body is needed; malformed JSON a 400 in the one error body) before the
 * route's validator parses it, which then finds it read. `amend` changes it first (the send
 * route adds the X-Steward-User header's `by`).
 *
 * @example
 * createRoute({ …, middleware: readJsonBody({ emptyAs: {} }) });
 */
export function readJsonBody(options: { emptyAs?: unknown; amend?: (body: unknown, c: Context) => unknown } = {}): MiddlewareHandler {
  return async (c, next) => {
    const body = await jsonBody(c, options.emptyAs);
    const value = options.amend ? options.amend(body, c) : body;
    // The request now carries the body as read (as hono's body limit swaps in its own): the
    // validator reads it from there, and nothing reads the original text again.
    const headers = new Headers(c.req.raw.headers);
    headers.set('content-type', 'application/json');
    c.req.raw = new Request(c.req.url, { method: c.req.method, headers, body: JSON.stringify(value), signal: c.req.raw.signal });
    c.req.bodyCache = {};
    await next();
  };
}
