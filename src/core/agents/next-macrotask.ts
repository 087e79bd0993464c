/**
 * A promise that resolves on a later macrotask, for the turns to wait on between model calls
 * (EventLoopSlice below says how often). A model that answers without I/O (a script, the demo
 * model, a cache) resolves in a microtask, and XState chains the next round in microtasks too:
 * without a macrotask between rounds a whole burst holds the event loop, so no timer,
 * `stop()`, request or other session runs until it ends.
 *
 * Browser-safe (this module is part of `steward/machine`): `setImmediate` where the platform
 * has it (Node, Bun), else a `MessageChannel` message (browsers; `setTimeout(0)` is clamped
 * to 4 ms there once nested), else `setTimeout(0)`.
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

/**
 * Rounds that run back to back share the event loop in slices of `ms` and of at most `rounds`
 * rounds: a round starts at once while the slice lasts, else it waits for the next macrotask
 * and a new slice begins. A burst of instant rounds so holds the loop for one slice at most,
 * while the wait costs once a slice instead of once a round. The count bounds a slice where
 * the clock does not (a clock may stand still between two I/Os, as in Cloudflare's workerd,
 * or move in coarse steps, as in a browser that blurs its timers). A model that does I/O
 * gives the loop up in every call, so its rounds, far apart, wait each time, which costs
 * nothing next to the call.
 *
 * @example
 * const slice = new EventLoopSlice();
 * await slice.next(); // undefined while the slice lasts: nothing to wait for
 */
export class EventLoopSlice {
  #endsAt = 0;
  #rounds = 0;

  constructor(
    readonly ms = 1,
    readonly rounds = 32,
  ) {}

  /** Undefined while the slice lasts; else the next macrotask, when a new slice begins. */
  next(): Promise<void> | undefined {
    if (this.#rounds < this.rounds && performance.now() < this.#endsAt) {
      this.#rounds += 1;
      return undefined;
    }
    return nextMacrotask().then(() => {
      this.#rounds = 1;
      this.#endsAt = performance.now() + this.ms;
    });
  }
}
