/**
 * Where a session's streamed model text goes. The session's event hub registers a sink for
 * its actor system while a listener wants text deltas; the turns look it up when a model
 * call starts and ask the model to stream only then. Keyed by the XState system (one per
 * session actor, handed to every actor of the session), held weakly: a stopped session
 * leaves nothing behind.
 */
export type TextDeltaSink = (text: string) => void;

const sinks = new WeakMap<object, TextDeltaSink>();

/** Registers (or, with undefined, removes) the sink of one session's actor system. */
export function setTextDeltaSink(system: object, sink: TextDeltaSink | undefined): void {
  if (sink) sinks.set(system, sink);
  else sinks.delete(system);
}

/** The sink of the session that runs this model call, if one of its listeners wants text. */
export function textDeltaSink(system: object): TextDeltaSink | undefined {
  return sinks.get(system);
}
