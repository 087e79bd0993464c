/**
 * What an MCP server asks a person during a call (elicitation), as a session keeps it: the
 * server's `input_required` requests made into bounded data for the journal and the wait
 * `tool_input`, and a person's answers checked against the form the server asked for before
 * the chart sees them. Everything here came from a server: it is data, cut to size, never run.
 */
import { createHash } from 'node:crypto';
import type { InputRequests, InputResponses } from '@modelcontextprotocol/client';
import type { ToolCallInputRequest, ToolInputRequest, ToolInputResponse } from '../core/tools/server-tools.js';
import { canonicalJson } from '../core/text/canonical-json.js';
import type { SchemaProblem } from '../mcp/validate-arguments.js';

/** Requests one call may make at once, and the sizes kept of each (a server may send anything). */
export const TOOL_INPUT_LIMITS = Object.freeze({ requests: 20, keyChars: 200, messageChars: 2_000, urlChars: 2_000, schemaChars: 32_000 });

const cut = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);

/**
 * The requests of an `input_required` result as the session keeps them, or why the call cannot
 * go on: Steward answers elicitations (a form or a URL); a server that asks for anything else
 * (sampling, roots), or sends a form Steward cannot show, gets no answer and the call fails.
 *
 * @example
 * inputRequestsOf({ confirm: { method: 'elicitation/create', params: { mode: 'form', message: 'Deploy?', requestedSchema } } });
 * // { requests: [{ key: 'confirm', mode: 'form', message: 'Deploy?', requestedSchema }] }
 */
export function inputRequestsOf(raw: InputRequests): { requests: ToolInputRequest[] } | { problem: string } {
  const entries = Object.entries(raw ?? {});
  if (entries.length === 0) return { problem: 'The server asked for input but sent no request.' };
  if (entries.length > TOOL_INPUT_LIMITS.requests)
    return { problem: `The server asked ${entries.length} questions at once; Steward takes at most ${TOOL_INPUT_LIMITS.requests}.` };
  const requests: ToolInputRequest[] = [];
  for (const [rawKey, request] of entries) {
    if (rawKey.length > TOOL_INPUT_LIMITS.keyChars) return { problem: `The server named a request with a key over ${TOOL_INPUT_LIMITS.keyChars} characters.` };
    const key = rawKey;
    if (request.method !== 'elicitation/create')
      return { problem: `The server asked for "${cut(String(request.method), 60)}", which Steward does not offer (it answers elicitations only).` };
    const params = request.params as Record<string, unknown>;
    const message = cut(typeof params.message === 'string' ? params.message : '', TOOL_INPUT_LIMITS.messageChars);
    if (params.mode === 'url') {
      const url = typeof params.url === 'string' ? params.url : '';
      if (!/^https?:\/\//i.test(url) || url.length > TOOL_INPUT_LIMITS.urlChars)
        return { problem: `The server asked the user to visit "${cut(url, 80)}", which is not an http(s) address Steward shows.` };
      // The 2026-07-28 URL request has no elicitationId (the server correlates by its request state); an older one does.
      const id = typeof params.elicitationId === 'string' ? { elicitationId: cut(params.elicitationId, TOOL_INPUT_LIMITS.keyChars) } : {};
      requests.push({ key, mode: 'url', message, url, ...id });
      continue;
    }
    const schema = params.requestedSchema;
    if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return { problem: `The server's form "${key}" has no schema.` };
    if (canonicalJson(schema).length > TOOL_INPUT_LIMITS.schemaChars)
      return { problem: `The server's form "${key}" is over ${TOOL_INPUT_LIMITS.schemaChars} characters as JSON.` };
    requests.push({ key, mode: 'form', message, requestedSchema: schema as Record<string, unknown> });
  }
  return { requests };
}

/** A person's answers as MCP takes them back (`inputResponses`: an elicitation result per key). */
export function inputResponsesOf(responses: Record<string, ToolInputResponse>): InputResponses {
  return Object.fromEntries(
    Object.entries(responses).map(([key, r]) => [key, { action: r.action, ...(r.action === 'accept' && r.content ? { content: r.content } : {}) }]),
  ) as InputResponses;
}

/**
 * Why a person's answers do not fit the forms the server asked for (null: they do). `check` is
 * the SDK's validator (validate-arguments.ts); each form's schema is compiled once, by its digest.
 */
export function answerProblem(
  server: string,
  tool: string,
  input: ToolCallInputRequest,
  responses: Record<string, ToolInputResponse>,
  check: (key: string, schema: Record<string, unknown>, value: unknown) => SchemaProblem | null,
): string | null {
  for (const request of input.requests) {
    const answer = responses[request.key];
    // An accept without content is the chart's to refuse (answersToolInput), in its own words.
    if (request.mode !== 'form' || answer?.action !== 'accept' || answer.content === undefined) continue;
    const digest = createHash('sha256').update(canonicalJson(request.requestedSchema)).digest('hex');
    const problem = check(digest, request.requestedSchema, answer.content);
    if (problem === null) continue;
    if ('uncheckable' in problem)
      return `The form "${request.key}" that ${server}.${tool} asked for cannot be checked (${problem.uncheckable}): decline or cancel it.`;
    const errors = problem.errors.replace(/(^|, )data(?=[/ ])/g, '$1content');
    return `The answer to "${request.key}" does not match the form ${server}.${tool} asked for: ${errors}. Nothing was sent; fix the answer and send it again.`;
  }
  return null;
}
