/**
 * The MCP forms of a wait where names come from a package (src/protocols/mcp/forms.ts): a tag
 * may be named "__proto__" or "constructor", and an edit of it is the person's edit of that tag,
 * never a prototype; a long body is no field's default (a host sends a form's fields back whole);
 * the answer to a URL request carries no content.
 */
import { describe, expect, it } from 'vitest';
import type { SessionView } from '../../src/core/view.js';
import { eventForAnswer } from '../../src/protocols/ag-ui/interrupts.js';
import { formsFor, FormResponse, toolInputAnswer } from '../../src/protocols/mcp/forms.js';

/** A session reviewing artifact a1, whose tags have names that are also Object's. */
const review = {
  id: 's1',
  wait: 4,
  phase: 'waiting_user',
  state: 'waiting_user.review_artifact',
  waitingReason: 'review_artifact',
  acceptedEvents: ['user_accepted_artifact', 'user_rejected_artifact'],
  deadline: null,
  deciders: null,
  artifact: {
    id: 'a1',
    workerId: 'writer',
    status: 'pending_review',
    tags: [
      { tag: '__proto__', version: 1, body: 'P body', writtenBy: 'writer' },
      { tag: 'constructor', version: 1, body: 'C body', writtenBy: 'writer' },
    ],
  },
} as unknown as SessionView;

describe('MCP forms', () => {
  it('keeps an edit of a tag named __proto__ or constructor as that tag’s edit', () => {
    const [form] = formsFor(review);
    const properties = (form!.request.params as { requestedSchema: { properties: Record<string, { default?: string }> } }).requestedSchema.properties;
    expect(Object.keys(properties)).toEqual(['accepted', 'edits.__proto__', 'edits.constructor', 'reason']);
    expect(properties['edits.__proto__']!.default).toBe('P body');
    // As a host's JSON arrives: "__proto__" an own key of the content.
    const response = FormResponse.parse(
      JSON.parse('{"action":"accept","content":{"accepted":true,"edits.__proto__":"P edited","edits.constructor":"C body"}}'),
    );
    const answer = form!.answerOf(response.content!);
    if (!answer.ok) throw new Error(answer.message);
    const event = eventForAnswer(review, answer.payload);
    if (!event.ok) throw new Error(event.message);
    expect(event.event).toMatchObject({ type: 'user_accepted_artifact', artifactId: 'a1' });
    const edits = (event.event as { edits: Record<string, string> }).edits;
    expect(Object.keys(edits)).toEqual(['__proto__']);
    expect(Object.getOwnPropertyDescriptor(edits, '__proto__')?.value).toBe('P edited');
    expect(Object.getPrototypeOf(edits)).toBe(Object.prototype);
  });

  it('gives a long body no default: its field left empty accepts it as it is, filled it is the edit', () => {
    const long = 'x'.repeat(5000);
    const view = { ...review, artifact: { ...review.artifact!, tags: [{ tag: 'draft', version: 1, body: long, writtenBy: 'writer' }] } } as SessionView;
    const [form] = formsFor(view);
    const field = (form!.request.params as { requestedSchema: { properties: Record<string, Record<string, unknown>> } }).requestedSchema.properties[
      'edits.draft'
    ]!;
    expect(field).not.toHaveProperty('default');
    expect(form!.answerOf({ accepted: true, 'edits.draft': '' })).toEqual({ ok: true, payload: { accepted: true } });
    expect(form!.answerOf({ accepted: true, 'edits.draft': 'Shorter.' })).toEqual({ ok: true, payload: { accepted: true, edits: { draft: 'Shorter.' } } });
  });

  it('answers a URL request of a tool’s server with its action alone, whatever content a host sent', () => {
    const asking = {
      id: 's1',
      wait: 5,
      phase: 'waiting_user',
      state: 'waiting_user.tool_input',
      waitingReason: 'tool_input',
      acceptedEvents: ['user_answered_tool_input'],
      deadline: null,
      deciders: null,
      toolCalls: [
        {
          callId: 'c1',
          server: 'notes',
          tool: 'sync',
          arguments: {},
          digest: 'd',
          status: 'asking',
          approvalBy: 'person',
          input: { requests: [{ key: 'login', mode: 'url', message: 'Sign in.', url: 'https://notes.example/login' }] },
        },
      ],
    } as unknown as SessionView;
    const [form] = formsFor(asking);
    expect(form!.request.params).toMatchObject({ mode: 'url', url: 'https://notes.example/login' });
    const answer = toolInputAnswer(asking, new Map([[form!.interruptId, { action: 'accept', content: {} }]]));
    expect(answer).toEqual({ ok: true, payload: { callId: 'c1', responses: { login: { action: 'accept' } } } });
    const event = eventForAnswer(asking, (answer as { payload: unknown }).payload);
    expect(event.ok, event.ok ? '' : event.message).toBe(true);
  });
});
