/**
 * The SDK's transport for an expanded server: stdio for a local one, Streamable HTTP for a
 * remote one, each bounded.
 *
 * A local server's environment is its declared `env` plus PATH, nothing else. The SDK's stdio
 * transport adds a few variables of the parent (HOME, USER, SHELL, TERM, LOGNAME) to whatever
 * it is given; each of those the server did not declare is passed as `undefined`, which Node's
 * spawn leaves out of the child's environment. The test server echoes its variables' names, so
 * a change of either is caught (test/mcp/tool-host-stdio.test.ts). A server that needs HOME
 * declares it: `"env": { "HOME": "${HOME}" }`.
 *
 * One message is at most `messageBytes`: the stdio transport's read buffer (the SDK closes the
 * connection on a longer line), and over HTTP a POST's answer body (cut as it streams in).
 */
import type { FetchLike, Transport } from '@modelcontextprotocol/client';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { DEFAULT_INHERITED_ENV_VARS, StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { Stream } from 'node:stream';
import type { ExpandedServer } from './expand-variables.js';

export interface ServerTransport {
  transport: Transport;
  /** A local server's stderr (piped), null for a remote one. */
  stderr: Stream | null;
  /** A local server's process id once started, for `close()` to make sure it is gone. */
  pid(): number | null;
}

/**
 * The transport that reaches `server`, not yet started (`client.connect` starts it).
 *
 * @example
 * const { transport } = createTransport(expandServer('files', config, process.env), { path: process.env.PATH, messageBytes: 10 * 1024 * 1024 });
 * await client.connect(transport);
 */
export function createTransport(server: ExpandedServer, options: { path: string | undefined; messageBytes: number }): ServerTransport {
  if (server.kind === 'http') {
    const transport = new StreamableHTTPClientTransport(new URL(server.url), {
      requestInit: { headers: server.headers },
      fetch: boundedFetch(options.messageBytes),
    });
    return { transport, stderr: null, pid: () => null };
  }
  const dropped = Object.fromEntries(DEFAULT_INHERITED_ENV_VARS.map((name) => [name, undefined]));
  const env = { ...dropped, ...(options.path !== undefined ? { PATH: options.path } : {}), ...server.env };
  const transport = new StdioClientTransport({
    command: server.command,
    args: server.args,
    // The SDK's type says strings; `undefined` is what removes an inherited variable (see above).
    env: env as Record<string, string>,
    ...(server.cwd !== undefined ? { cwd: server.cwd } : {}),
    stderr: 'pipe',
    maxBufferSize: options.messageBytes,
  });
  return { transport, stderr: transport.stderr, pid: () => transport.pid };
}

/**
 * `fetch` whose POST answers (the answers to requests, JSON or an SSE stream of one request)
 * stop with an error past `maxBytes`: a server's 50 MB result must not be read into memory.
 * The GET stream a 2025-era server may keep open carries notifications only, and is left as is.
 */
function boundedFetch(maxBytes: number): FetchLike {
  return async (url, init) => {
    const response = await fetch(url, init);
    if (init?.method !== 'POST' || !response.body) return response;
    let seen = 0;
    const limited = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          seen += chunk.byteLength;
          if (seen > maxBytes) controller.error(new Error(`the server's answer is over ${maxBytes} bytes (limits.messageBytes)`));
          else controller.enqueue(chunk);
        },
      }),
    );
    return new Response(limited, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
