/**
 * The audit trail as text, one row at a time (so a long trail is written as it is read):
 * JSON Lines (one row per line, exactly as the schema has it, with the characters a terminal
 * would act on escaped) or CSV (the schema's fields as columns, objects as canonical JSON,
 * null as an empty cell; src/text/csv.ts quotes and protects each cell). `steward audit` and
 * `GET /sessions/{id}/audit` both write with these.
 */
import { canonicalJson } from '../core/text/canonical-json.js';
import { csvRecord } from '../text/csv.js';
import { safeJson } from '../text/safe-text.js';
import { AUDIT_COLUMNS, type AuditFormat, type AuditRow } from './audit-row.js';

/** The media type of each format (written in UTF-8). */
export const AUDIT_MEDIA_TYPE: Record<AuditFormat, string> = {
  jsonl: 'application/jsonl',
  csv: 'text/csv',
};

/**
 * What comes before the rows: the CSV header (the column names), nothing for JSON Lines.
 *
 * @example
 * process.stdout.write(auditHeader('csv')); // 'sessionId,wait,waitingReason,…\r\n'
 */
export function auditHeader(format: AuditFormat): string {
  return format === 'csv' ? csvRecord(AUDIT_COLUMNS) : '';
}

const cell = (value: unknown): string => (value === null || value === undefined ? '' : typeof value === 'string' ? value : canonicalJson(value));

/**
 * One row as a line of `format`, its line break included.
 *
 * @example
 * for (const row of rows) process.stdout.write(auditLine(row, 'jsonl'));
 */
export function auditLine(row: AuditRow, format: AuditFormat): string {
  if (format === 'jsonl') return `${safeJson(JSON.stringify(row))}\n`;
  return csvRecord(AUDIT_COLUMNS.map((column) => cell(row[column])));
}
