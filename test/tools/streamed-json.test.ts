/**
 * The incremental reader of a tool call's arguments: whatever the chunking, the pieces of
 * each string two levels down join to what JSON.parse gives, escapes decoded across chunk
 * boundaries and surrogate pairs never split.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { StreamedJsonReader } from '../../src/runtime/streamed-json.js';

/** Feeds `chunks`; returns every piece, and the pieces joined per "outer.inner". */
function read(chunks: readonly string[]): { pieces: [string, string, string][]; joined: Record<string, string>; broken: boolean } {
  const pieces: [string, string, string][] = [];
  const reader = new StreamedJsonReader((outer, inner, text) => pieces.push([outer, inner, text]));
  for (const chunk of chunks) reader.write(chunk);
  const joined: Record<string, string> = {};
  for (const [outer, inner, text] of pieces) joined[`${outer}.${inner}`] = (joined[`${outer}.${inner}`] ?? '') + text;
  return { pieces, joined, broken: reader.broken };
}

/** `text` cut at the given positions. */
function cut(text: string, at: readonly number[]): string[] {
  const points = [...new Set(at.map((p) => p % (text.length + 1)))].sort((a, b) => a - b);
  const out: string[] = [];
  let from = 0;
  for (const p of points) {
    out.push(text.slice(from, p));
    from = p;
  }
  out.push(text.slice(from));
  return out;
}

/** A JSON string literal with some characters escaped in every legal way (\uXXXX, \/, the short escapes). */
function literal(value: string, escapeMask: readonly boolean[]): string {
  let out = '"';
  for (let i = 0; i < value.length; i++) {
    const ch = value[i]!;
    const code = value.charCodeAt(i);
    const forced = ch === '"' || ch === '\\' || code < 0x20;
    if (!forced && !escapeMask[i % Math.max(1, escapeMask.length)]) out += ch;
    else if (ch === '/') out += '\\/';
    else if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else {
      const hex = code.toString(16).padStart(4, '0');
      out += `\\u${i % 2 ? hex.toUpperCase() : hex}`;
    }
  }
  return `${out}"`;
}

/** A JSON text of `value` written by hand (own escapes, random whitespace), so JSON.stringify's choices are not the only ones tried. */
function write(value: unknown, mask: readonly boolean[], space: string): string {
  if (typeof value === 'string') return literal(value, mask);
  if (Array.isArray(value)) return `[${space}${value.map((v) => write(v, mask, space)).join(`,${space}`)}${space}]`;
  if (value && typeof value === 'object')
    return `{${space}${Object.entries(value)
      .map(([k, v]) => `${literal(k, mask)}${space}:${space}${write(v, mask, space)}`)
      .join(`${space},`)}${space}}`;
  return JSON.stringify(value);
}

describe('StreamedJsonReader', () => {
  it('reports the strings two levels down, decoded, in the pieces they came in', () => {
    const { pieces } = read(['{"outputs": {"note": "Tea ', 'for\\ntwo", "n": 3, "list": ["x"]', ', "deep": {"a": "no"}}, "top": "no"}']);
    expect(pieces).toEqual([
      ['outputs', 'note', 'Tea '],
      ['outputs', 'note', 'for\ntwo'],
    ]);
  });

  it('decodes escapes split across chunks: \\n, \\", \\u00e9 and a surrogate pair', () => {
    const text = '{"outputs":{"t\\u0061g":"a\\nb\\"c\\u00e9d\\ud83d\\ude00e\\\\f\\/"}}';
    const expected = JSON.parse(text) as { outputs: Record<string, string> };
    // Every single cut point, and one character at a time.
    for (let p = 0; p <= text.length; p++) expect(read([text.slice(0, p), text.slice(p)]).joined).toEqual({ 'outputs.tag': expected.outputs.tag });
    const oneByOne = read([...text]);
    expect(oneByOne.joined['outputs.tag']).toBe('a\nb"céd😀e\\f/');
    // No piece ends in the middle of the emoji's surrogate pair.
    for (const [, , piece] of oneByOne.pieces) expect(/[\ud800-\udbff]$/.test(piece)).toBe(false);
  });

  it('reports only the first value of a repeated key (JSON.parse keeps the last: the caller compares)', () => {
    expect(read(['{"outputs":{"a":"x","a":"y"}}']).joined).toEqual({ 'outputs.a': 'x' });
  });

  it('stops at text that cannot be JSON, and reports nothing for a top level that is not an object', () => {
    const bad = read(['{"outputs":{"a":"x\\q and more"}}']);
    expect(bad.broken).toBe(true);
    expect(bad.joined).toEqual({ 'outputs.a': 'x' });
    expect(read(['["outputs", {"a": "b"}]'])).toMatchObject({ broken: true, pieces: [] });
    expect(read(['{"outputs":{"a":"\\u00zz"}}']).broken).toBe(true);
  });

  it('any chunking of any JSON gives the strings JSON.parse gives', () => {
    const tagBody = fc.string({ unit: 'binary', maxLength: 40 });
    const outputs = fc.dictionary(fc.string({ unit: 'binary', maxLength: 6 }), fc.oneof({ weight: 4, arbitrary: tagBody }, fc.jsonValue({ maxDepth: 2 })), {
      maxKeys: 4,
    });
    const args = fc.record({ outputs, other: fc.jsonValue({ maxDepth: 2 }) }, { requiredKeys: ['outputs'] });
    fc.assert(
      fc.property(
        args,
        fc.array(fc.boolean(), { minLength: 1, maxLength: 7 }),
        fc.constantFrom('', ' ', '\n  '),
        fc.array(fc.nat(), { maxLength: 30 }),
        (value, mask, space, at) => {
          const text = write(value, mask, space);
          const parsed = JSON.parse(text) as { outputs: Record<string, unknown> };
          const expected: Record<string, string> = {};
          for (const [tag, body] of Object.entries(parsed.outputs)) if (typeof body === 'string' && body !== '') expected[`outputs.${tag}`] = body;
          const { joined, broken } = read(cut(text, at));
          expect(broken).toBe(false);
          expect(Object.fromEntries(Object.entries(joined).filter(([path]) => path.startsWith('outputs.')))).toEqual(expected);
        },
      ),
      { numRuns: 250 },
    );
  });
});
