import { createRoute } from '@hono/zod-openapi';
import * as z from 'zod';
import { defineRoute, jsonContent } from '../../http/route.js';
import { auditHeader, auditLine, AUDIT_MEDIA_TYPE } from '../../runtime/audit-output.js';
import { AuditRowSchema } from '../../runtime/audit-row.js';
import { sessionAuditRows } from '../../runtime/audit-rows.js';
import { BEARER, SessionIdParams, type ServeDeps } from '../route.js';
import { AuditQuery, ErrorBody } from '../schemas.js';

export const audit = defineRoute(
  createRoute({
    method: 'get',
    path: '/sessions/{id}/audit',
    summary:
      "The session's audit trail: one row per decision that answered a wait (the wait, when it opened and closed, who decided " +
      'and through what, the decision and its edits, the sha256 of what the person was shown), in the order they were taken',
    security: BEARER,
    request: { params: SessionIdParams, query: AuditQuery },
    responses: {
      200: {
        description: 'The rows: JSON Lines (each line one row, as this schema) or CSV (a header with the same field names, then one row per line)',
        content: { [AUDIT_MEDIA_TYPE.jsonl]: { schema: AuditRowSchema }, [AUDIT_MEDIA_TYPE.csv]: { schema: z.string() } },
      },
      400: jsonContent('Bad query', ErrorBody),
      404: jsonContent('No such session (or not one the caller may see)', ErrorBody),
    },
  }),
  ({ runtime, store, access }: ServeDeps) =>
    async (c) => {
      const { id } = c.req.valid('param');
      const { format = 'jsonl' } = c.req.valid('query');
      await access.require(c.get('caller'), id, 'read');
      // One session's journal is read whole to replay it, so its rows are written at once.
      let body = auditHeader(format);
      for (const row of await sessionAuditRows(runtime, store, id)) body += auditLine(row, format);
      return c.body(body, 200, { 'content-type': `${AUDIT_MEDIA_TYPE[format]}; charset=utf-8` });
    },
);
