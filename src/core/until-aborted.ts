/**
 * `promise`, or a rejection with the signal's reason as soon as `signal` aborts (at once if it
 * already has). What the promise stands for goes on: the caller stops waiting, which is what a
 * stopped session needs while the OpenAI SDK sleeps between retries or an MCP server starts for
 * several sessions.
 *
 * @example
 * const listing = await untilAborted(host.listTools(server), signal);
 */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
