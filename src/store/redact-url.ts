/**
 * A postgres:// URL without its password (in the user part or a `password=` parameter):
 * safe for messages and logs. `placeholder` stands where a password was, if given.
 */
export function redactUrl(url: string, placeholder = ''): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = placeholder;
    if (parsed.searchParams.has('password')) parsed.searchParams.set('password', placeholder);
    return parsed.toString();
  } catch {
    return 'the PostgreSQL URL given (it does not parse as a URL)';
  }
}
// Kept apart from postgres-store.ts so that printing a location never loads `pg`.
