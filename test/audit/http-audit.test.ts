/**
 * GET /sessions/{id}/audit on a real server (127.0.0.1): the rows of a session decided over
 * REST by an act-for-others token (by the person named, via the token, through rest), as JSON
 * Lines and as CSV parsed back; a client cannot claim `through`; the route needs the token
 * and knows the session.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { SessionView } from '../../src/core/view.js';
import { tokensFromEnv } from '../../src/http/tokens.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import { AUDIT_COLUMNS, AuditRowSchema } from '../../src/runtime/audit-row.js';
import { startServe, type ServeHandle } from '../../src/serve/server.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { client } from '../serve/http.js';
import { AUDIT_DECISIONS, auditModel, expectAuditRows } from './audit-session.js';
import { expectedCells, parseCsv } from './csv-parse.js';

const open: ServeHandle[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

const FRONT_DESK = 'front-desk-token-0123456789abcdef';

describe('GET /sessions/{id}/audit', () => {
  it('answers the rows of a session decided over REST, as JSON Lines and as CSV', async () => {
    const store = new MemoryStore();
    const runtime = createRuntime({ model: auditModel(), store });
    const tokens = tokensFromEnv({ STEWARD_TOKENS: `front-desk ${FRONT_DESK} act-for-others` });
    if (tokens.kind !== 'named') throw new Error('named tokens expected');
    const server = await startServe({ runtime, store, port: 0, log: () => {}, tokens: tokens.tokens });
    open.push(server);
    const http = client(server.url, FRONT_DESK);
    const id: string = (await http.post('/sessions', { packageId: 'short-story' })).body.view.id;

    // A client cannot say which surface it is.
    const claimed = await http.post(`/sessions/${id}/events`, { ...AUDIT_DECISIONS[0], through: 'cli' });
    expect(claimed.status).toBe(400);
    expect(claimed.body.error.message).toContain('the server sets `through`');

    const views: SessionView[] = [];
    for (const decision of AUDIT_DECISIONS) {
      views.push((await http.get(`/sessions/${id}`)).body.view);
      const sent = await http.post(`/sessions/${id}/events`, decision);
      expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    }

    const jsonl = await http.get(`/sessions/${id}/audit`);
    expect(jsonl.status).toBe(200);
    expect(jsonl.headers.get('content-type')).toBe('application/jsonl; charset=utf-8');
    const rows = String(jsonl.body)
      .trim()
      .split('\n')
      .map((line) => AuditRowSchema.parse(JSON.parse(line)));
    // The token acts for others, so it sees every session: serve stamps its decisions as admin's.
    expectAuditRows(rows, id, views, 'rest', 'front-desk', ['admin']);

    const csv = await http.get(`/sessions/${id}/audit?format=csv`);
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    const [header, ...records] = parseCsv(String(csv.body));
    expect(header).toEqual(AUDIT_COLUMNS);
    expect(records).toEqual(rows.map((row) => expectedCells(row, AUDIT_COLUMNS)));

    expect((await http.get(`/sessions/${id}/audit?format=xml`)).status).toBe(400);
    expect((await http.get('/sessions/s-none/audit')).status).toBe(404);
    expect((await client(server.url).get(`/sessions/${id}/audit`)).status).toBe(401);
  });
});
