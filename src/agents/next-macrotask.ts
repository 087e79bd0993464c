/**
 * A promise that resolves on a later macrotask, for the turns to wait on before each model
 * call. A model that answers without I/O (a script, the demo model, a cache) resolves in a
 * microtask, and XState chains the next round in microtasks too: without a macrotask between
 * rounds a whole burst holds the event loop, so no timer, `stop()`, request or other session
 * runs until it ends.
 *
 * Browser-safe (this module is part of `steward/machine`): `setImmediate` where the platform
 * has it (Node, Bun), else a `MessageChannel` message (browsers; `setTimeout(0)` is clamped
 * to 4 ms there once nested), else `setTimeout(0)`. Nothing is kept between calls.
 */
type Immediate = (callback: () => void) => unknown;
/** What both a DOM and a Node MessagePort offer (their declared types differ). */
interface Port {
  onmessage: (() => void) | null;
  postMessage(message: null): void;
  close(): void;
}

export function nextMacrotask(): Promise<void> {
  const scope = globalThis as { setImmediate?: Immediate };
  if (typeof scope.setImmediate === 'function') return new Promise((resolve) => scope.setImmediate!(resolve));
  if (typeof MessageChannel === 'function') {
    return new Promise((resolve) => {
      const { port1, port2 } = new MessageChannel() as unknown as { port1: Port; port2: Port };
      port1.onmessage = () => {
        port1.close();
        resolve();
      };
      port2.postMessage(null);
    });
  }
  return new Promise((resolve) => setTimeout(resolve, 0));
}
