/** Models for the browser-facing serve tests: the demo model, streaming text as it answers, optionally held until released. */
import { DemoModel } from '../../src/models/demo-model.js';
import type { Model, ModelReply, ModelRequest } from '../../src/core/models/model.js';

/** The demo model, which first streams `pieces` of text for every call (as a real model's content deltas). */
export function streamingDemo(pieces: readonly string[] = ['Think', 'ing…']): Model {
  const demo = new DemoModel();
  return {
    label: 'streaming demo',
    complete: async (request: ModelRequest): Promise<ModelReply> => {
      for (const piece of pieces) request.onTextDelta?.(piece);
      return demo.complete(request);
    },
  };
}

/** A streaming demo model whose calls wait until `release()`: a run that is still under way when a request answers. */
export function heldDemo(): { model: Model; calls: () => number; release: () => void } {
  const inner = streamingDemo();
  let calls = 0;
  let open: () => void = () => {};
  let gate = new Promise<void>((resolve) => (open = resolve));
  return {
    model: {
      label: 'held demo',
      complete: async (request) => {
        calls += 1;
        await gate;
        return inner.complete(request);
      },
    },
    calls: () => calls,
    release: () => {
      open();
      gate = Promise.resolve();
    },
  };
}
