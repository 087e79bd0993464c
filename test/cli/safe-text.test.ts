/* eslint-disable no-control-regex -- these tests look for control characters in what reaches a terminal */
import pc from 'picocolors';
import { describe, expect, it } from 'vitest';
import { safeJson, safeLine, safeText } from '../../src/text/safe-text.js';
import { formatBlocks, formatPackages, waitBlocks } from '../../src/cli/render.js';
import type { SkillPackage } from '../../src/skills/index.js';

describe('safeText / safeLine / safeJson', () => {
  it('shows C0, DEL, C1 and bidi controls visibly and keeps newlines and tabs in text', () => {
    expect(safeText('a\x1b[2Jb\x07c\x00d\x7fe\u009bf\u202eg\u2066h\u200fi\u061cj\u2028k')).toBe(
      'a␛[2Jb␇c␀d␡e\\x9bf<U+202E>g<U+2066>h<U+200F>i<U+061C>j<U+2028>k',
    );
    expect(safeText('line one\n\tline two\r\nthree\rover')).toBe('line one\n\tline two\nthree␍over');
    expect(safeLine('one\ntwo\tthree')).toBe('one␊two␉three');
    expect(safeText('plain text, ünïcödé, emoji 👩‍💻 and "quotes"')).toBe('plain text, ünïcödé, emoji 👩‍💻 and "quotes"');
  });

  it('escapes in JSON what JSON.stringify leaves raw, and the JSON still parses to the same value', () => {
    const value = { text: 'a\x1b]0;t\x07 \u009b31m \u202e \u2029' };
    const json = JSON.stringify(value);
    expect(json).toContain('\u202e'); // JSON.stringify does not escape it…
    const safe = safeJson(json);
    expect(safe).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202e\u2029]/);
    expect(JSON.parse(safe)).toEqual(value); // …and escaping it loses nothing
  });

  it('is linear: a 1,000,000-character hostile text is sanitised', () => {
    expect(safeText('\x1b'.repeat(1_000_000))).toHaveLength(1_000_000);
  });
});

describe('render: data is sanitised before it is coloured', () => {
  const evil = 'x\x1b]0;title\x07\u202e';
  it('package titles, descriptions, worker ids and tags', () => {
    const pkg: SkillPackage = {
      id: 'p',
      title: evil,
      description: evil,
      dir: '/',
      mcpServers: {},
      workers: [
        {
          id: 'w',
          title: evil,
          description: evil,
          inputTags: [evil],
          outputTags: ['o'],
          roles: [{ id: evil, description: evil }],
          approval: 'model',
          tools: [],
          prompt: '',
        },
      ],
    };
    const out = formatPackages(new Map([['p', pkg]]), pc.createColors(false));
    expect(out).not.toMatch(/\x1b\]|\x07|\u202e/);
    expect(out).toContain('x␛]0;title␇<U+202E>');
  });

  it("keeps colours: the escape sequences left are picocolors' own SGR codes", () => {
    const colours = pc.createColors(true);
    const view = { waitingReason: 'input', phase: 'waiting_user', message: evil, blackboard: [], questions: null } as never;
    const blocks = waitBlocks(view);
    const coloured = blocks.map((b) => colours.cyan(b.body)).join('');
    expect(coloured.replace(/\x1b\[\d+m/g, '')).toBe('x␛]0;title␇<U+202E>');
    expect(formatBlocks(blocks, colours)).toContain('x␛]0;title␇<U+202E>');
  });
});
