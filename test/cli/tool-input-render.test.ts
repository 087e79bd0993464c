/**
 * What a server asks a person (tool_input), as `steward show` renders it, for the requests the
 * notes server does not make: a page to visit (its domain shown first, as the browser would
 * reach it, a look-alike or a `user@` prefix included) and a form with every kind of field MCP
 * allows. Rendered from a view, as render.ts is given one; everything the server wrote reaches
 * the terminal escaped.
 */
import { describe, expect, it } from 'vitest';
import pc from 'picocolors';
import { formatSession } from '../../src/cli/render.js';
import type { SessionView, ToolCallView } from '../../src/core/view.js';
import { formFields, typedValue, urlDomain } from '../../src/core/tools/tool-input-form.js';

/** The terminal's text without colours, as a command that writes to a pipe prints it. */
const plain = pc.createColors(false);

/** A session waiting in tool_input on one call asking `requests`. */
function askingView(requests: NonNullable<ToolCallView['input']>['requests']): SessionView {
  const asking: ToolCallView = {
    callId: 'c1',
    server: 'notes',
    tool: 'sync',
    arguments: { folder: 'inbox' },
    digest: 'd',
    status: 'asking',
    approvalBy: 'default',
    description: 'Syncs the notes.',
    input: { requests },
  };
  return {
    id: 's_1',
    packageId: 'notes',
    state: 'waiting_user.tool_input',
    phase: 'waiting_user',
    waitingReason: 'tool_input',
    wait: 3,
    burst: 1,
    maxBurst: 12,
    toolCalls: [asking],
    blackboard: [],
    artifacts: [],
    acceptedEvents: ['user_answered_tool_input'],
    enabledEvents: ['user_answered_tool_input'],
    rejections: [],
    usage: { promptTokens: 0, completionTokens: 0 },
    rounds: 2,
    tokens: { burst: 0, session: 0, maxBurst: null },
    packageVersion: null,
    deadline: null,
    deciders: null,
  };
}

const everyKind = {
  type: 'object',
  properties: {
    colour: { type: 'string', title: 'Colour', enum: ['red', 'green'], enumNames: ['Red', 'Green'] },
    size: {
      type: 'string',
      oneOf: [
        { const: 's', title: 'Small' },
        { const: 'l', title: 'Large' },
      ],
      default: 'l',
    },
    tags: { type: 'array', items: { anyOf: [{ const: 'a', title: 'Alpha' }, { const: 'b' }] }, minItems: 1 },
    count: { type: 'integer', minimum: 1, maximum: 9, description: 'How many copies' },
    ratio: { type: 'number' },
    email: { type: 'string', format: 'email', maxLength: 80 },
    urgent: { type: 'boolean', default: false },
    odd: { type: 'object', title: 'Not a kind MCP allows' },
  },
  required: ['colour', 'count'],
};

describe('a server asking a person, rendered for the terminal', () => {
  it('shows a page to visit with its domain first, the domain the browser reaches', () => {
    const out = formatSession(
      askingView([
        { key: 'login', mode: 'url', message: 'Sign in to sync.', url: 'https://notes.example/login?next=%2F', elicitationId: 'e1' },
        { key: 'trap', mode: 'url', message: 'Also this one.', url: 'https://notes.example@evil.example/login', elicitationId: 'e2' },
        { key: 'lookalike', mode: 'url', message: 'And this.', url: 'https://nötes.example/', elicitationId: 'e3' },
      ]),
      5,
      { colors: plain },
    );
    expect(out).toContain('Waiting for you: answer what notes.sync asks (3 requests).');
    expect(out).toContain('Request "login" of notes.sync · a page to visit');
    expect(out).toContain(
      'Sign in to sync.\nVisit (notes.example): https://notes.example/login?next=%2F\nOnce you have been there: accept (done), or decline or cancel.',
    );
    expect(out).toContain('Visit (evil.example): https://notes.example@evil.example/login');
    expect(out).toContain('Visit (xn--ntes-5qa.example): https://nötes.example/');
    expect(out).toContain(
      `steward send s_1 answer-call --call c1 --responses '{"login":{"action":"accept"},"trap":{"action":"accept"},"lookalike":{"action":"accept"}}'`,
    );
  });

  it('lists every kind of form field with its choices, rules, title and description', () => {
    const out = formatSession(askingView([{ key: 'options', mode: 'form', message: 'How should it sync?', requestedSchema: everyKind }]), 5, { colors: plain });
    expect(out).toContain(
      [
        'How should it sync?',
        'Fields:',
        '  colour (one of: Red, Green; required): Colour',
        '  size (one of: Small, Large; optional)',
        '  tags (any of: Alpha, b; optional; pick at least 1)',
        '  count (integer; required; at least 1; at most 9): How many copies',
        '  ratio (number; optional)',
        '  email (text; optional; at most 80 characters; an email address)',
        '  urgent (boolean; optional)',
        '  odd (text; optional): Not a kind MCP allows',
      ].join('\n'),
    );
    // The example answer fills the required fields: the first choice, a number.
    expect(out).toContain(`--responses '{"options":{"action":"accept","content":{"colour":"red","count":1}}}'`);
  });

  it('escapes what the server wrote: a message, a field title, a URL', () => {
    const out = formatSession(
      askingView([
        { key: 'k', mode: 'url', message: 'Go \u001b]0;owned\u0007 now', url: 'https://a.example/\u202egnp.exe', elicitationId: 'e' },
        {
          key: "it's",
          mode: 'form',
          message: 'Fill \u009b2J',
          requestedSchema: { type: 'object', properties: { x: { type: 'string', title: 'T\u001b[31m' } } },
        },
      ]),
      5,
      { colors: plain },
    );
    expect(out).toContain('Go ␛]0;owned␇ now');
    expect(out).toContain('Fill \\x9b2J');
    expect(out).toContain('x (text; optional): T␛[31m');
    // Steward's own colours (on when CI is set, as picocolors decides) are the only escapes left.
    const uncoloured = out.replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g'), '');
    for (const raw of ['\u001b', '\u0007', '\u009b', '\u202e']) expect(uncoloured).not.toContain(raw);
    // A key with a quote stays one shell word.
    expect(out).toContain(`--responses '{"k":{"action":"accept"},"it'\\''s":{"action":"accept","content":{}}}'`);
  });
});

describe('reading a form and its answers', () => {
  it('types a number field and leaves an empty optional field out', () => {
    const [colour, , , count, ratio] = formFields(everyKind);
    expect(typedValue(count!, '3')).toEqual({ value: 3 });
    expect(typedValue(count!, '2.5')).toEqual({ problem: 'Type a whole number.' });
    expect(typedValue(ratio!, 'abc')).toEqual({ problem: 'Type a number.' });
    expect(typedValue(ratio!, ' ')).toEqual({ value: undefined });
    expect(typedValue(colour!, '')).toEqual({ problem: 'This field is required.' });
  });

  it('finds the domain a browser reaches, and none for what is not a web address', () => {
    expect(urlDomain('https://user:pw@docs.example:8443/x')).toBe('docs.example');
    expect(urlDomain('javascript:alert(1)')).toBeUndefined();
    expect(urlDomain('not a url')).toBeUndefined();
  });
});
