/**
 * Request bodies of Steward's HTTP servers: JSON documents of a bounded size. The Host /
 * Origin / content-type guards (./security.ts) have already refused a body that is not
 * `Content-Type: application/json` (415) by the time a route reads one; `bodyLimit` refuses
 * one that is too large (413) before it is read, declared or streamed.
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
