/**
 * The one error body of Steward's HTTP servers, `{ error: { code, message, issues? } }`: the
 * servers answer it (src/http/errors.ts), the OpenAPI document describes it, and
 * steward/client reads it back. zod only, so a web page's bundle may carry it.
 */
import * as z from 'zod';
import type { RequestIssue } from '../core/errors.js';

/** One problem of a refused body, query, path or header: where, and what is wrong there (the client's RequestIssue). */
export const IssueSchema = z.object({ path: z.string(), message: z.string() }) satisfies z.ZodType<RequestIssue>;

export type Issue = z.infer<typeof IssueSchema>;

export const ErrorBody = z
  .object({
    error: z.object({
      code: z
        .string()
        .describe(
          'stable: invalid_request, unauthorized, event_refused, conflict, session_not_found, session_running_elsewhere, lease_lost, server_stopping, …',
        ),
      message: z.string().describe('what is wrong and how to fix it'),
      issues: z.array(IssueSchema).optional(),
    }),
  })
  .describe('A failure');

export type ErrorBodyShape = z.infer<typeof ErrorBody>;
