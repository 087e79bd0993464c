import { describe, expect, it } from 'vitest';
import type { ModelReply, ToolCall } from '../../src/index.js';
import { MAX_JSON_DEPTH, jsonObjectIn, normalizeReply, parseCall, toolCallIds } from '../../src/core/tools/reply.js';

const text = (content: string | null): ModelReply => ({ content, toolCalls: [] });
const toolCall = (name: string, args: string, id = 'c1'): ToolCall => ({ id, type: 'function', function: { name, arguments: args } });
const names = (reply: ReturnType<typeof normalizeReply>) => reply.queue.map((q) => q.call.function.name);

describe('normalizeReply: real tool calls', () => {
  it('keeps the calls as they came, in order, with their arguments parsed once', () => {
    const reply: ModelReply = {
      content: 'thinking aloud',
      toolCalls: [toolCall('list_workers', '{}', 'a'), toolCall('read_blackboard', '{"tags":["brief"]}', 'b')],
    };
    const { message, queue } = normalizeReply('manager', reply, 'fallback_1');
    expect(message).toEqual({ role: 'assistant', content: 'thinking aloud', tool_calls: reply.toolCalls });
    expect(queue.map((q) => [q.call.id, q.args])).toEqual([
      ['a', {}],
      ['b', { tags: ['brief'] }],
    ]);
  });

  it('ignores the content when the reply has tool calls (no legacy parsing on top)', () => {
    const reply: ModelReply = { content: '{"tool":"finish","arguments":{}}', toolCalls: [toolCall('list_workers', '{}')] };
    expect(names(normalizeReply('manager', reply, 'f'))).toEqual(['list_workers']);
  });

  it('reads empty arguments as {} and keeps malformed JSON as a parse error for rule 2', () => {
    expect(parseCall(toolCall('list_workers', '  '))).toMatchObject({ args: {} });
    const broken = parseCall(toolCall('run_worker', '{"workerId": "echo",'));
    expect(broken.args).toBeUndefined();
    expect(broken.parseError).toMatch(/JSON|property name/);
  });
});

describe('normalizeReply: the manager legacy one-shot JSON', () => {
  it('turns {"tool", "arguments"} into one synthetic call with an id from idBase', () => {
    const content = JSON.stringify({ tool: 'run_worker', arguments: { workerId: 'echo', reason: 'go', requiresApproval: true } });
    const { message, queue } = normalizeReply('manager', text(content), 'fallback_7');
    expect(queue).toHaveLength(1);
    expect(queue[0]!.call).toEqual({
      id: 'fallback_7_0',
      type: 'function',
      function: { name: 'run_worker', arguments: JSON.stringify({ workerId: 'echo', reason: 'go', requiresApproval: true }) },
    });
    expect(message.tool_calls).toEqual([queue[0]!.call]);
    expect(message.content).toBe(content); // the transcript keeps what the model said
  });

  it('reads JSON fenced as ```json … ``` and as a bare ``` fence', () => {
    const fencedJson = '```json\n{"tool": "finish", "arguments": {"summary": "done"}}\n```';
    const fencedBare = '  ```\n{"tool": "finish", "arguments": {"summary": "done"}}\n```  ';
    for (const content of [fencedJson, fencedBare]) {
      const normalized = normalizeReply('manager', text(content), 'f');
      expect(names(normalized)).toEqual(['finish']);
      expect(normalized.queue[0]!.args).toEqual({ summary: 'done' });
    }
  });

  it('accepts the name / action and args / params spellings, and no arguments at all', () => {
    expect(normalizeReply('manager', text('{"name":"list_workers","args":{}}'), 'f').queue[0]!.call.function).toEqual({
      name: 'list_workers',
      arguments: '{}',
    });
    expect(normalizeReply('manager', text('{"action":"read_blackboard","params":{"tags":["x"]}}'), 'f').queue[0]!.args).toEqual({ tags: ['x'] });
    expect(normalizeReply('manager', text('{"tool":"list_artifacts"}'), 'f').queue[0]!.args).toEqual({});
  });

  it('shows non-object JSON, or an object without a tool name, to the user as ask_user', () => {
    for (const content of ['[1, 2, 3]', '"just a string"', '42', 'null', '{"message": "hello"}', '{"tool": 3}', '{not json']) {
      const { queue } = normalizeReply('manager', text(content), 'f');
      expect(
        queue.map((q) => [q.call.function.name, q.args]),
        content,
      ).toEqual([['ask_user', { message: content }]]);
    }
  });

  it('trims plain text before showing it', () => {
    const { queue } = normalizeReply('manager', text('\n  Which era should the story be set in?  \n'), 'fallback_2');
    expect(queue[0]!.call.id).toBe('fallback_2_0');
    expect(queue[0]!.args).toEqual({ message: 'Which era should the story be set in?' });
  });
});

describe('normalizeReply: the worker Phase A JSON', () => {
  it('turns outputs + askUser into submit then ask_user', () => {
    const { queue } = normalizeReply('worker', text('{"outputs":{"note":"hi"},"askUser":["Shorter?"]}'), 'fallback_3');
    expect(queue.map((q) => [q.call.id, q.call.function.name, q.args])).toEqual([
      ['fallback_3_0', 'submit', { outputs: { note: 'hi' } }],
      ['fallback_3_1', 'ask_user', { questions: ['Shorter?'] }],
    ]);
  });

  it('reads askUser as a single string or as { questions }', () => {
    expect(normalizeReply('worker', text('{"askUser":"Who is it for?"}'), 'f').queue[0]!.args).toEqual({ questions: ['Who is it for?'] });
    expect(normalizeReply('worker', text('{"askUser":{"questions":["A?","B?"]}}'), 'f').queue[0]!.args).toEqual({ questions: ['A?', 'B?'] });
  });

  it('reads an empty askUser next to outputs as "no questions", not as a broken ask_user call', () => {
    for (const empty of ['[]', 'null', '""']) {
      const { queue } = normalizeReply('worker', text(`{"outputs":{"note":"hi"},"askUser":${empty}}`), 'f');
      expect(
        queue.map((q) => q.call.function.name),
        empty,
      ).toEqual(['submit']);
    }
  });

  it('reads fenced Phase A JSON', () => {
    const { queue } = normalizeReply('worker', text('```json\n{"outputs": {"note": "fenced"}}\n```'), 'f');
    expect(queue.map((q) => q.args)).toEqual([{ outputs: { note: 'fenced' } }]);
  });

  it('gives plain worker text, non-object JSON and unrelated objects no calls (the worker is nudged instead)', () => {
    for (const content of ['Here is my note: hi', '["hi"]', '{"note": "hi"}']) {
      const { message, queue } = normalizeReply('worker', text(content), 'f');
      expect(queue, content).toEqual([]);
      expect(message).toEqual({ role: 'assistant', content });
    }
  });
});

describe('normalizeReply: empty replies', () => {
  it.each([
    ['null content', null],
    ['an empty string', ''],
    ['whitespace only', ' \n\t '],
  ])('a reply with %s and no calls yields no calls for either actor', (_label, content) => {
    for (const actor of ['manager', 'worker'] as const) {
      const { message, queue } = normalizeReply(actor, text(content), 'f');
      expect(queue).toEqual([]);
      expect(message).toEqual({ role: 'assistant', content: content ?? '' });
      expect('tool_calls' in message).toBe(false); // an empty tool_calls array is invalid for the API
    }
  });
});

describe('jsonObjectIn', () => {
  it('finds an object only when the whole content is one (bare or fenced)', () => {
    expect(jsonObjectIn(' {"a": 1} ')).toEqual({ a: 1 });
    expect(jsonObjectIn('Decision: {"a": 1}')).toBeUndefined();
    expect(jsonObjectIn('[{"a": 1}]')).toBeUndefined();
  });
});

describe('jsonObjectIn: fence parsing in linear time', () => {
  it('reads ```JSON fences case-insensitively, fences without a newline, and only a fence that closes at the end', () => {
    expect(jsonObjectIn('```JSON{"a": 1}```')).toEqual({ a: 1 });
    expect(jsonObjectIn('\n```\n\n {"a": 1} \n\n```\n')).toEqual({ a: 1 });
    expect(jsonObjectIn('```json\n{"a": "```"}\n```')).toEqual({ a: '```' });
    expect(jsonObjectIn('```json\n{"a": 1}\n``` trailing words')).toBeUndefined();
    expect(jsonObjectIn('```json\n{"a": 1}')).toBeUndefined();
    expect(jsonObjectIn('````')).toBeUndefined();
    expect(jsonObjectIn('```')).toBeUndefined();
  });

  it('refuses JSON nested deeper than MAX_JSON_DEPTH instead of letting a later JSON.stringify overflow the stack', () => {
    const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);
    const legacy = `{"tool": "finish", "arguments": {"summary": ${deep(100_000)}}}`;
    const manager = normalizeReply('manager', text(legacy), 'f');
    expect(manager.queue.map((q) => q.call.function.name)).toEqual(['ask_user']); // shown as text, not parsed
    const worker = normalizeReply('worker', text(`{"outputs": {"note": ${deep(100_000)}}}`), 'f');
    expect(worker.queue).toEqual([]);
    expect(parseCall(toolCall('submit', `{"outputs": ${deep(MAX_JSON_DEPTH)}}`)).parseError).toMatch(/nested deeper than 64/);
    expect(parseCall(toolCall('submit', `{"outputs": ${deep(MAX_JSON_DEPTH - 2)}}`)).parseError).toBeUndefined();
    // Brackets inside strings (and escaped quotes) do not count.
    expect(parseCall(toolCall('submit', JSON.stringify({ outputs: { note: '"[['.repeat(1000) } }))).parseError).toBeUndefined();
  });

  // Shapes that make a backtracking fence regex explode: a fence that never closes, with
  // long runs of what the regex's \s* and lazy body both may match.
  const shapes: [string, (n: number) => string][] = [
    ['three backticks + spaces', (n) => '```' + ' '.repeat(n - 3)],
    ['```json + newlines + a letter', (n) => '```json' + '\n'.repeat(n - 8) + 'x'],
    ['``` + " ```" repeated', (n) => '```' + ' ```'.repeat(Math.floor((n - 3) / 4)) + 'x'],
    ['spaces, then an unclosed fence', (n) => ' '.repeat(n - 4) + '```{'],
    ['backticks only', (n) => '`'.repeat(n)],
    ['``` + tabs and newlines + ``', (n) => '```' + '\t\n'.repeat(Math.floor((n - 5) / 2)) + '``'],
    ['an unclosed fenced object', (n) => '```json\n{"a": "' + 'x'.repeat(n - 17) + '\n'],
    ['deeply nested arrays in a fence', (n) => '```\n{"a":' + '['.repeat(n - 20) + '\n```'],
  ];

  // No clock: a linear parse of a million characters takes milliseconds even on a busy machine,
  // while a quadratic one (10^12 steps) or the old cubic regex never ends within the test's time.
  it.each(shapes)('a 1,000,000-character reply (%s) is parsed, and normalized for both agents, within the test time', (_label, make) => {
    const large = make(1_000_000);
    expect(large.length).toBeGreaterThan(999_000);
    expect(() => {
      jsonObjectIn(large);
      normalizeReply('manager', text(large), 'f');
      normalizeReply('worker', text(large), 'f');
    }).not.toThrow();
  });
});

describe('normalizeReply: call ids', () => {
  it('renames ids that are missing, repeated in the reply, or already used in the transcript', () => {
    const used = toolCallIds([
      { role: 'assistant', content: null, tool_calls: [toolCall('list_workers', '{}', 'same'), toolCall('list_workers', '{}', 'f_dup1')] },
    ]);
    const reply: ModelReply = {
      content: null,
      toolCalls: [
        toolCall('list_workers', '{}', 'same'),
        toolCall('list_artifacts', '{}', 'same'),
        toolCall('list_workers', '{}', ''),
        toolCall('list_workers', '{}', 'fresh'),
      ],
    };
    const ids = normalizeReply('manager', reply, 'f', used).queue.map((q) => q.call.id);
    expect(ids).toEqual(['f_dup0', 'f_dup1_2', 'f_dup2', 'fresh']);
    expect(normalizeReply('manager', { content: null, toolCalls: [toolCall('list_workers', '{}', 'same')] }, 'g', used).queue[0]!.call.id).toBe('g_dup0');
  });
});
