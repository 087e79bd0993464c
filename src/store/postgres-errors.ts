/** PostgreSQL failures a user can fix, as StoreUnavailableError (no `pg` import: just codes). */
import { StoreUnavailableError } from '../core/errors.js';

/**
 * The PostgreSQL failures a user can fix, as StoreUnavailableError; undefined for others.
 * Messages name the target without its password.
 */
export function translateConnectError(error: unknown, target: string): StoreUnavailableError | undefined {
  const code = (error as { code?: string }).code;
  const detail = (error as Error).message ?? String(error);
  const fixUrl = 'Check STEWARD_DB (or --db): postgres://USER:PASSWORD@HOST:PORT/DATABASE.';
  switch (code) {
    case 'ECONNREFUSED':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'ENOENT': // a Unix socket path that does not exist
      return new StoreUnavailableError(
        'unreachable',
        target,
        `Cannot reach the PostgreSQL server at ${target} (${code}). Start the server, or fix the host and port. ${fixUrl}`,
        { cause: error },
      );
    case '28P01':
    case '28000':
      return new StoreUnavailableError(
        'bad_credentials',
        target,
        `PostgreSQL at ${target} refused the login: ${detail}. Fix the user name and password in the URL (or PGPASSWORD / ~/.pgpass), or the server's pg_hba.conf.`,
        { cause: error },
      );
    case '3D000':
      return new StoreUnavailableError(
        'missing_database',
        target,
        `PostgreSQL at ${target} has no such database: ${detail}. Create it (\`createdb NAME\` or CREATE DATABASE NAME) or name an existing one in the URL.`,
        { cause: error },
      );
    default:
      if (/timeout|terminated unexpectedly|Connection terminated/i.test(detail) && !code) {
        return new StoreUnavailableError(
          'unreachable',
          target,
          `Lost the connection to PostgreSQL at ${target}: ${detail}. Check that the server is up. ${fixUrl}`,
          { cause: error },
        );
      }
      return undefined;
  }
}
