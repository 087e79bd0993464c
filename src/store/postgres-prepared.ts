/**
 * Named prepared statements for PostgresStore's queries: PostgreSQL parses and plans each
 * statement once per connection instead of at every call, and the statement's text crosses
 * the wire once. The journal write is one long statement (six parts in one round trip), so
 * planning it is most of what it costs the database (docs/design.md has the figures).
 *
 * Off behind a pooler in transaction mode that does not keep prepared statements per
 * client (PgBouncer before 1.21, or without `max_prepared_statements`): `preparedStatements:
 * false`, or STEWARD_PG_PREPARED=off for the CLI.
 */
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { UserError } from '../core/errors.js';
import { quotedSetting } from '../core/limits.js';

/**
 * Appended to a statement whose commit need not wait for the disk: `synchronous_commit=off`
 * for its own (implicit) transaction — read at commit, reset after it, so it never leaks into
 * the pooled connection. An uncorrelated subquery in WHERE runs once, as an InitPlan.
 */
export const DEFER_FLUSH = ` WHERE (SELECT set_config('synchronous_commit', 'off', true)) = 'off'`;

/** A statement's name: from its text, so one name never stands for two texts on a connection. */
export class StatementNames {
  private readonly names = new Map<string, string>();

  /** The query as pg takes it: named when it has parameters (a text without is sent as is). */
  config(text: string, values: unknown[] | undefined): pg.QueryConfig {
    if (!values) return { text };
    let name = this.names.get(text);
    if (!name) {
      name = `steward_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
      this.names.set(text, name);
    }
    return { name, text, values };
  }
}

/** Whether the CLI's STEWARD_PG_PREPARED allows prepared statements (default: yes). */
export function preparedFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  const raw = env.STEWARD_PG_PREPARED;
  if (raw === undefined) return true;
  const value = raw.toLowerCase();
  if (value === '' || value === 'on' || value === '1' || value === 'true') return true;
  if (value === 'off' || value === '0' || value === 'false') return false;
  throw new UserError(
    `STEWARD_PG_PREPARED is ${quotedSetting(raw)}: set it to "off" behind a pooler in transaction mode that keeps no prepared statements, or unset it (default on).`,
  );
}
