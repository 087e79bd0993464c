/**
 * One HTTP request to 127.0.0.1 with exactly the headers given (Host included: no default
 * is added), for tests of what a server does with a forged Host, Origin or content type.
 */
import { request, type IncomingHttpHeaders } from 'node:http';

export interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body parsed as JSON, or its text when it is not JSON (a page, an asset). */
  body: any;
}

/** A string body is sent with its length, an array in chunks (transfer-encoding: chunked). */
export function rawRequest(port: number, method: string, path: string, headers: Record<string, string>, body?: string | string[]): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers, setHost: false }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => {
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          // not JSON: keep the text
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parsed });
      });
    });
    req.on('error', reject);
    if (Array.isArray(body)) for (const chunk of body) req.write(chunk);
    req.end(Array.isArray(body) ? undefined : body);
  });
}
