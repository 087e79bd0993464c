/**
 * GET /openapi.json — the API document, generated from each route's doc and the zod
 * schemas the routes validate with (zod 4's z.toJSONSchema): one source for both.
 */
import { z } from 'zod';
import type { RouteDoc, RouteModule } from '../route.js';
import { SESSION_ID_MAX_CHARS, SESSION_ID_RULE } from '../../ids.js';

export const openapi: RouteModule = {
  doc: {
    method: 'get',
    path: '/openapi.json',
    summary: 'This document (OpenAPI 3.1)',
    public: true,
    responses: { 200: { description: 'The OpenAPI document' } },
  },
  mount(app, { routes, auth }) {
    const document = openapiDocument(
      routes.map((r) => r.doc),
      auth,
    );
    app.get('/openapi.json', (c) => c.json(document));
  },
};

export function openapiDocument(docs: readonly RouteDoc[], auth: boolean): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const doc of docs) {
    const parameters: unknown[] = [];
    for (const name of doc.path.match(/\{(\w+)\}/g) ?? []) {
      parameters.push({
        name: name.slice(1, -1),
        in: 'path',
        required: true,
        description: SESSION_ID_RULE,
        schema: { type: 'string', minLength: 1, maxLength: SESSION_ID_MAX_CHARS },
      });
    }
    if (doc.query) {
      for (const [name, schema] of Object.entries(doc.query.shape)) {
        const json = z.toJSONSchema(schema as z.ZodType, { io: 'input' }) as Record<string, unknown>;
        const { description, ...rest } = json;
        parameters.push({
          name,
          in: 'query',
          required: !(schema as z.ZodType).safeParse(undefined).success,
          schema: rest,
          ...(description ? { description } : {}),
        });
      }
    }
    for (const [name, description] of Object.entries(doc.headers ?? {}))
      parameters.push({ name, in: 'header', required: false, description, schema: { type: 'string' } });
    const responses: Record<string, unknown> = {};
    for (const [status, response] of Object.entries(doc.responses)) {
      const type = response.contentType ?? 'application/json';
      responses[status] = {
        description: response.description,
        ...(response.headers
          ? { headers: Object.fromEntries(Object.entries(response.headers).map(([name, description]) => [name, { description, schema: { type: 'string' } }])) }
          : {}),
        ...(response.schema
          ? { content: { [type]: { schema: jsonSchema(response.schema, 'output') } } }
          : response.contentType
            ? { content: { [type]: {} } }
            : {}),
      };
    }
    if (auth && !doc.public) responses['401'] ??= { description: 'Missing or wrong bearer token' };
    // The request guards (src/http/security.ts) answer before any route.
    responses['403'] ??= {
      description: 'The Host is not an address of this server (or an allowed name), or the request comes from a web page whose Origin is not allowed',
    };
    if (doc.body) responses['415'] = { description: 'The body is not sent as Content-Type: application/json' };
    (paths[doc.path] ??= {})[doc.method] = {
      summary: doc.summary,
      ...(parameters.length ? { parameters } : {}),
      ...(doc.body ? { requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(doc.body, 'input') } } } } : {}),
      responses,
      ...(auth && !doc.public ? { security: doc.ticketed ? [{ bearer: [] }, { streamTicket: [] }] : [{ bearer: [] }] } : { security: [] }),
    };
    // A public document is probed with HEAD too (load balancers, link checkers): the GET's answers, without a body.
    if (doc.public && doc.method === 'get')
      paths[doc.path]!.head = {
        summary: `${doc.summary} — headers only`,
        ...(parameters.length ? { parameters } : {}),
        responses: Object.fromEntries(Object.entries(responses).map(([status, r]) => [status, { description: (r as { description: string }).description }])),
        security: [],
      };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Steward serve',
      version: '1',
      description: 'Sessions of human-in-the-loop agent teams over HTTP. Errors are { error: { code, message, issues? } }.',
    },
    paths,
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: "The server's STEWARD_TOKEN, or a named token of its STEWARD_TOKENS (STEWARD_TOKENS_FILE)" },
        streamTicket: {
          type: 'apiKey',
          in: 'query',
          name: 'ticket',
          description: 'GET /sessions/{id}/stream only: a ticket from POST /sessions/{id}/stream-tickets (60 s, that session only)',
        },
      },
    },
  };
}

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
}
