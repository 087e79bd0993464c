/**
 * A notes server built with the official MCP server SDK, for the runtime's tool tests: it keeps
 * notes in memory and appends every call it receives to the file NOTES_LOG (one JSON line each),
 * so a test sees exactly what reached the server. NOTES_WRITE_DESCRIPTION, when set, changes
 * write_note's description (a new definition of the tool). slow_write records its call and
 * never answers: a call a process can die in. confirm_write asks a person first (a 2026-07-28
 * `input_required` form; its request state names the note, so any process of the server can
 * take the answer): accepted with `confirm: true` it writes, else it does not; read_private asks
 * the person to visit a page first (URL mode); summarize asks the client's model (sampling), which
 * Steward does not offer.
 */
import { appendFileSync } from 'node:fs';
import { inputRequired, McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import * as z from 'zod';

const notes = new Map();
const record = (tool, args) => appendFileSync(process.env.NOTES_LOG, `${JSON.stringify({ tool, args })}\n`);
const text = (value) => ({ content: [{ type: 'text', text: value }] });

serveStdio(() => {
  const server = new McpServer({ name: 'notes', version: '1.0.0' });
  server.registerTool(
    'read_note',
    { description: 'Reads a note.', inputSchema: z.object({ path: z.string() }), annotations: { readOnlyHint: true } },
    async (args) => (record('read_note', args), text(notes.get(args.path) ?? `(no note at ${args.path})`)),
  );
  server.registerTool(
    'write_note',
    {
      description: process.env.NOTES_WRITE_DESCRIPTION || 'Writes a note.',
      inputSchema: z.object({ path: z.string(), text: z.string().min(1) }),
      annotations: { destructiveHint: true },
    },
    async (args) => (record('write_note', args), notes.set(args.path, args.text), text(`wrote ${args.path}`)),
  );
  server.registerTool('delete_note', { description: 'Deletes a note.', inputSchema: z.object({ path: z.string() }) }, async (args) => {
    record('delete_note', args);
    notes.delete(args.path);
    return text(`deleted ${args.path}`);
  });
  server.registerTool(
    'confirm_write',
    {
      description: 'Writes a note once a person confirms it.',
      inputSchema: z.object({ path: z.string(), text: z.string().min(1) }),
      annotations: { destructiveHint: true },
    },
    async (args, ctx) => {
      const answer = ctx.mcpReq.inputResponses?.confirm;
      if (answer && ctx.mcpReq.requestState() === `confirm:${args.path}`) {
        record('confirm_write', { ...args, answer });
        if (answer.action !== 'accept' || answer.content?.confirm !== true)
          return { content: [{ type: 'text', text: `not written (${answer.action})` }], isError: true };
        notes.set(args.path, args.text);
        return text(`wrote ${args.path}, confirmed by ${answer.content.initials}`);
      }
      record('confirm_write?', args);
      return inputRequired({
        inputRequests: {
          confirm: inputRequired.elicit({
            message: `Write ${args.path}?`,
            requestedSchema: {
              type: 'object',
              properties: { confirm: { type: 'boolean', title: 'Write it' }, initials: { type: 'string', minLength: 2, title: 'Your initials' } },
              required: ['confirm', 'initials'],
            },
          }),
        },
        requestState: `confirm:${args.path}`,
      });
    },
  );
  server.registerTool(
    'read_private',
    { description: 'Reads a private note once the person has signed in.', inputSchema: z.object({ path: z.string() }), annotations: { readOnlyHint: true } },
    async (args, ctx) => {
      const answer = ctx.mcpReq.inputResponses?.login;
      if (answer && ctx.mcpReq.requestState() === `login:${args.path}`) {
        record('read_private', { ...args, answer });
        if (answer.action !== 'accept') return { content: [{ type: 'text', text: `not signed in (${answer.action})` }], isError: true };
        return text(`private: ${notes.get(args.path) ?? '(no note)'}`);
      }
      record('read_private?', args);
      return inputRequired({
        inputRequests: {
          login: inputRequired.elicitUrl({
            message: 'Sign in to read private notes.',
            url: `https://notes.example/login?next=${encodeURIComponent(args.path)}`,
          }),
        },
        requestState: `login:${args.path}`,
      });
    },
  );
  server.registerTool('summarize', { description: "Summarizes a note with the client's model.", inputSchema: z.object({ path: z.string() }) }, async (args) => {
    record('summarize?', args);
    return inputRequired({
      inputRequests: { summary: inputRequired.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: 'Summarize.' } }], maxTokens: 50 }) },
    });
  });
  server.registerTool(
    'slow_write',
    { description: 'Writes a note, slowly: it never answers.', inputSchema: z.object({ path: z.string() }), annotations: { destructiveHint: true } },
    (args) => (record('slow_write', args), new Promise(() => {})),
  );
  return server;
});
