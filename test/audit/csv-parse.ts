import { canonicalJson } from '../../src/core/text/canonical-json.js';

/** A reader of RFC 4180 CSV for the tests: quoted fields, doubled quotes, line breaks inside quotes; every record ends with CRLF. */
export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (char === '"') quoted = false;
      else field += char;
    } else if (char === '"') quoted = true;
    else if (char === ',') {
      record.push(field);
      field = '';
    } else if (char === '\r' && text[i + 1] === '\n') {
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      i++;
    } else field += char;
  }
  if (field !== '' || record.length) throw new Error('CSV does not end with a line break');
  return records;
}

/** The cells a row must have in the CSV: null empty, objects as canonical JSON, a formula-looking cell prefixed with '. */
export function expectedCells(row: Record<string, unknown>, columns: readonly string[]): string[] {
  return columns.map((column) => {
    const value = row[column];
    const cell = value === null ? '' : typeof value === 'string' ? value : canonicalJson(value);
    return /^[=+\-@]/.test(cell) ? `'${cell}` : cell;
  });
}
