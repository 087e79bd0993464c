/**
 * What every inspector route needs: the runtime and store it serves, the manual model (when
 * the page plays it), the machine's graph, the live hub, and an uncached JSON answer. Each
 * route is declared once with @hono/zod-openapi (src/http/route.ts), as serve's are.
 * Errors and bodies: src/http/errors.ts, src/http/body.ts.
 */
import type { Context } from 'hono';
import * as z from 'zod';
import type { ManualModel } from '../../models/manual-model.js';
import type { Runtime } from '../../runtime/runtime.js';
import type { SessionStore } from '../../store/session-store.js';
import type { MachineGraph } from '../graph.js';
import type { LiveHub } from '../live-hub.js';
import type { KeptLayouts } from '../kept-layouts.js';
import type { JournalReplayer } from '../replay.js';

export interface InspectorContext {
  runtime: Runtime;
  store: SessionStore;
  manual: ManualModel | null;
  graph: MachineGraph;
  replayer: JournalReplayer;
  hub: LiveHub;
  /** Sends still running, so close() can let them finish their writes. */
  inFlight: Set<Promise<unknown>>;
  /** The session the page opens first. */
  sessionId: string | null;
  /** Where laid-out charts are kept between page loads (InspectorOptions.layoutsDir), or null. */
  layouts: KeptLayouts | null;
}

/** JSON that no cache keeps (the page polls and streams; a stale answer would mislead). */
export function json(c: Context, body: unknown, status: 200 | 201 = 200): Response {
  c.header('cache-control', 'no-store');
  return c.json(body as object, status);
}

/**
 * A session id in the inspector's paths: as given (the runtime's calls check it); serve's
 * routes mounted here check it by the id rule (src/serve/route.ts).
 */
export const InspectorSessionParams = z.object({ id: z.string() });
