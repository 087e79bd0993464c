/**
 * The URL clients reach Steward's routes at, as discovery documents (the A2A agent card) name
 * it: `steward serve --public-url` (startServe / createServeApp `publicUrl`), else the
 * address the server listens on. Never the request's Host: a discovery document names where
 * the agent is, and a Host header is whatever the client (or a rebinding page) sent.
 */
import * as z from 'zod';
import { UserError } from '../core/errors.js';

/** An absolute http(s) URL without a query or fragment; a path is where the routes are mounted (a proxy's prefix, an app's `app.route`). */
const PublicUrlSchema = z
  .url({ protocol: /^https?$/, error: 'must be an absolute http:// or https:// URL' })
  .refine((url) => !/[?#]/.test(url), 'must have no query (?…) or fragment (#…)');

/**
 * `value` checked as a public URL and without its trailing `/`, or a UserError naming `where`
 * (the flag or option) and the fix.
 *
 * @example
 * parsePublicUrl('https://agents.example.com/steward/', '--public-url'); // 'https://agents.example.com/steward'
 */
export function parsePublicUrl(value: string, where: string): string {
  const parsed = PublicUrlSchema.safeParse(value);
  if (!parsed.success)
    throw new UserError(
      `${where} ${JSON.stringify(value.slice(0, 200))} ${parsed.error.issues.map((i) => i.message).join('; ')}: give the URL clients reach these routes at, ` +
        'e.g. https://agents.example.com or https://example.com/steward (where an app mounts them).',
    );
  return parsed.data.replace(/\/+$/, '');
}
