/** CSV fields as an auditor's spreadsheet reads them: quoted by RFC 4180, formulas kept as text, control characters shown. */
import { describe, expect, it } from 'vitest';
import { csvField, csvRecord } from '../../src/text/csv.js';
import { parseCsv } from './csv-parse.js';

describe('CSV fields', () => {
  it('quotes a field with a comma, a quote or a line break, and doubles its quotes', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a, b')).toBe('"a, b"');
    expect(csvField('say "no"')).toBe('"say ""no"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(parseCsv(csvRecord(['a, b', 'say "no"', 'two\nlines', '']))).toEqual([['a, b', 'say "no"', 'two\nlines', '']]);
  });

  it('prefixes a cell a spreadsheet would run as a formula', () => {
    for (const start of ['=', '+', '-', '@', '\t']) expect(csvField(`${start}HYPERLINK("http://x")`)).toMatch(/^"?'/);
    expect(csvField('=1+1')).toBe("'=1+1");
    expect(csvField('a=1')).toBe('a=1');
  });

  it('shows control and bidi characters instead of writing them', () => {
    expect(csvField('\u001b[2Jcleared')).toBe('␛[2Jcleared');
    expect(csvField('abc\u202Edef')).toBe('abc<U+202E>def');
    // A carriage return alone is shown, not taken for a line break (nor a formula start).
    expect(csvField('\rx')).toBe('␍x');
  });
});
