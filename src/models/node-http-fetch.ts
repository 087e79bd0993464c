/**
 * The `fetch` the OpenAI client is given: the same request on `node:http` / `node:https`
 * with a keep-alive agent per model. Node's built-in fetch (undici's WHATWG layers: its
 * Request, the spec's fetch steps, web streams both ways) costs about three times the CPU of
 * the same request on `node:http`, and a `steward serve` makes one such request per model
 * round: its CPU and garbage per round are measurably lower with this one (bench/README.md).
 *
 * It takes only what the OpenAI client sends: a string or byte body (or none) to an http(s)
 * URL without credentials in it. Anything else — a stream or form body, another scheme, a
 * user or password in the URL, a redirect — is handed to the built-in fetch, so the answer is
 * always fetch's. Failures look as they do from fetch (`TypeError: fetch failed`, the system
 * error as its cause), so the SDK's retries and Steward's messages are unchanged.
 */
import http from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';
import zlib from 'node:zlib';

type Fetch = typeof globalThis.fetch;

/** Statuses whose response has no body (the Response constructor refuses one). */
const NULL_BODY_STATUSES: ReadonlySet<number> = new Set([101, 103, 204, 205, 304]);
const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

/** The decoders fetch applies for `content-encoding`. */
const DECODERS: Readonly<Record<string, () => NodeJS.ReadWriteStream>> = {
  gzip: () => zlib.createGunzip(),
  'x-gzip': () => zlib.createGunzip(),
  deflate: () => zlib.createInflate(),
  br: () => zlib.createBrotliDecompress(),
};

export interface NodeHttpFetch {
  fetch: Fetch;
  /** Closes the kept-alive connections (they never hold the process open). */
  close(): void;
}

/**
 * A fetch for one client: its own agents, so the connections it keeps are its own.
 *
 * @example
 * const { fetch } = nodeHttpFetch();
 * const client = new OpenAI({ apiKey, fetch });
 */
export function nodeHttpFetch(fallback: Fetch = globalThis.fetch): NodeHttpFetch {
  const agents = { 'http:': new http.Agent({ keepAlive: true }), 'https:': new https.Agent({ keepAlive: true }) };
  const fetch: Fetch = (input, init) => {
    const url = typeof input === 'string' ? parsedUrl(input) : input instanceof URL ? input : null;
    const body = init?.body ?? undefined;
    const plainBody = body === undefined || typeof body === 'string' || body instanceof Uint8Array;
    // A URL with credentials in it goes to fetch too, which refuses it (node:http would send them).
    const plainUrl = url !== null && (url.protocol === 'http:' || url.protocol === 'https:') && !url.username && !url.password;
    if (!plainUrl || !plainBody || (init?.redirect ?? 'follow') !== 'follow') {
      return fallback(input, init);
    }
    return send(url, init ?? {}, body, url.protocol === 'http:' ? { http, agent: agents['http:'] } : { http: https, agent: agents['https:'] }).then(
      (response) => response ?? fallback(input, init),
    );
  };
  return {
    fetch,
    close: () => {
      agents['http:'].destroy();
      agents['https:'].destroy();
    },
  };
}

function parsedUrl(text: string): URL | null {
  try {
    return new URL(text);
  } catch {
    return null;
  }
}

/** One request; null when the answer is a redirect (fetch follows it). */
function send(
  url: URL,
  init: RequestInit,
  body: string | Uint8Array | undefined,
  via: { http: typeof http | typeof https; agent: http.Agent },
): Promise<Response | null> {
  const headers: Record<string, string> = {};
  new Headers(init.headers).forEach((value, name) => (headers[name] = value));
  if (body !== undefined) headers['content-length'] = String(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength);
  const signal = init.signal ?? undefined;
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  return new Promise((resolve, reject) => {
    // The signal is followed here, not by node:http, so an abort fails as fetch fails: with
    // the signal's reason, before the answer and while its body streams.
    let aborted = (): void => undefined;
    const onAbort = () => aborted();
    const stopFollowing = () => signal?.removeEventListener('abort', onAbort);
    const request = via.http.request(url, { method: init.method ?? 'GET', headers, agent: via.agent }, (res) => {
      const status = res.statusCode ?? 0;
      if (REDIRECT_STATUSES.has(status) && res.headers.location) {
        stopFollowing();
        res.resume();
        resolve(null);
        return;
      }
      const responseHeaders = new Headers();
      for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) responseHeaders.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
      const nullBody = NULL_BODY_STATUSES.has(status) || init.method === 'HEAD';
      const decoder = DECODERS[(res.headers['content-encoding'] ?? '').trim().toLowerCase()];
      const stream: Readable | null = nullBody ? null : decoder ? (res.pipe(decoder()) as unknown as Readable) : res;
      if (!stream) {
        stopFollowing();
        res.resume();
      } else {
        aborted = () => {
          stream.destroy(abortReason(signal!) as Error);
          request.destroy();
        };
        // A decoder is not destroyed with the response it reads: pass a cut connection on.
        if (stream !== res) res.on('error', (error) => stream.destroy(error));
        stream.once('close', stopFollowing);
      }
      resolve(
        new Response(stream && (Readable.toWeb(stream) as ReadableStream<Uint8Array>), {
          status,
          statusText: res.statusMessage ?? '',
          headers: responseHeaders,
        }),
      );
    });
    // `on`, not `once`: a socket can fail twice (a cut after an abort), and an unheard 'error' throws.
    request.on('error', (error) => {
      stopFollowing();
      reject(signal?.aborted ? abortReason(signal) : new TypeError('fetch failed', { cause: error }));
    });
    aborted = () => request.destroy();
    signal?.addEventListener('abort', onAbort, { once: true });
    request.end(body);
  });
}

/** What fetch fails with on an abort: the reason given to abort(), else an AbortError. */
function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}
