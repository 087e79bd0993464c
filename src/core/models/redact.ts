/**
 * Masks secrets in text that will be stored or printed: API keys (OpenAI-style `sk-…`, bearer
 * tokens, `api_key=` parameters) and the user:password part of URLs. Provider errors echo the
 * key they rejected ("Incorrect API key provided: sk-…"), and OPENAI_BASE_URL may carry
 * credentials; neither may reach a notice, the journal or a terminal.
 */

/** `sk-…` keys (OpenAI, and the many servers that copy the format), keeping a 4-character hint. */
const SK_KEY = /\b(sk-)[A-Za-z0-9_*-]{8,}/g;
const BEARER = /\b(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi;
const KEY_PARAM = /\b((?:api[_-]?key|access[_-]?token|token|key)=)[^\s&"']{4,}/gi;
/** scheme://user[:password]@ — the credentials go, the host stays (it helps to debug). */
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@:]*(?::[^\s/@]*)?@/gi;

/** The text with every secret masked; `known` are exact values to hide too (e.g. the configured key). */
export function redactSecrets(text: string, known: readonly (string | undefined)[] = []): string {
  let out = text.replace(URL_CREDENTIALS, '$1***@').replace(SK_KEY, '$1…').replace(BEARER, '$1***').replace(KEY_PARAM, '$1***');
  for (const secret of known) {
    // Short values would mask ordinary words; keys are long.
    if (secret && secret.length >= 8) out = out.split(secret).join('***');
  }
  return out;
}

/**
 * A URL (an OpenAI base URL, a postgres:// connection string) without its password, in the
 * user part or a `password=` parameter; the user name and host stay (they help to debug).
 * `placeholder` stands where a password was.
 */
export function redactUrl(url: string, placeholder = ''): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = placeholder;
    if (parsed.searchParams.has('password')) parsed.searchParams.set('password', placeholder);
    return parsed.toString();
  } catch {
    return 'the URL given (it does not parse as a URL)';
  }
}
