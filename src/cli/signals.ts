/**
 * The signals a command listens for (Ctrl+C, SIGTERM), with every listener it added removed
 * again: a command may run inside a longer-lived program (see ./io.ts), where a listener left
 * behind would outlive it and answer the next signal.
 */
const STOP_SIGNALS = ['SIGINT', 'SIGTERM'] as const;
type StopSignal = (typeof STOP_SIGNALS)[number];

/** Calls `handler` on the first SIGINT or SIGTERM; the returned function removes the listeners (called after the first signal too). */
export function onStopSignal(handler: (signal: StopSignal) => void): () => void {
  const listeners = STOP_SIGNALS.map((signal) => {
    const listener = () => {
      off();
      handler(signal);
    };
    process.once(signal, listener);
    return [signal, listener] as const;
  });
  const off = () => {
    for (const [signal, listener] of listeners) process.off(signal, listener);
  };
  return off;
}

/** Resolves with the first SIGINT or SIGTERM. */
export function untilStopSignal(): Promise<StopSignal> {
  return new Promise((resolve) => onStopSignal(resolve));
}
