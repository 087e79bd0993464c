/**
 * The MCP forms of a wait where names come from a package (src/protocols/mcp/forms.ts): a tag
 * may be named "__proto__" or "constructor", and an edit of it is the person's edit of that tag,
 * never a prototype.
 */
import { describe, expect, it } from 'vitest';
import type { SessionView } from '../../src/core/view.js';
import { eventForAnswer } from '../../src/protocols/ag-ui/interrupts.js';
import { formsFor, FormResponse } from '../../src/protocols/mcp/forms.js';

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
});
