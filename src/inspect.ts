/**
 * `steward/inspect`: visual tooling — Steward's inspector page on a runtime, remote
 * inspectors (Stately, WebSocket), the statechart as a diagram or a graph,
 * `stately.config.json`, and the manual model whose replies a person types in the page.
 * Its own entry so that hono, ws and @statelyai/inspect are loaded only by apps that inspect.
 *
 * @example
 * import { createRuntime, SqliteStore } from 'steward';
 * import { DemoModel } from 'steward/testing';
 * import { startInspector } from 'steward/inspect';
 *
 * const store = new SqliteStore('steward.db');
 * const runtime = createRuntime({ model: new DemoModel(), store });
 * const inspector = await startInspector({ runtime, store, port: 4747 });
 * console.log(`Inspector: ${inspector.url}`);
 */
import { startInspector as start, type InspectorHandle, type InspectorOptions } from './inspect/server.js';

export { setupInspection, parseInspectMode, type Inspection } from './inspect/index.js';
export { createRemoteInspect, type RemoteInspect, type RemoteTarget } from './inspect/stately.js';
export { machineGraph, type MachineGraph, type GraphNode, type GraphEdge } from './inspect/graph.js';
export { renderDiagram, diagramFormats, type DiagramFormat } from './inspect/diagram.js';
export { loadStatelyConfig, parseStatelyConfig, loadMachine, StatelyConfigSchema, type StatelyConfig, type InspectMode } from './inspect/config.js';
export { ManualModel, MANUAL_MODEL_LABEL, type ManualReply, type PendingModelRequest } from './models/manual-model.js';
export type { InspectorHandle, InspectorOptions };

/**
 * Starts Steward's inspector page on a runtime: the live chart, the journal with time travel
 * and fork, and the manual model's queue. Listens on 127.0.0.1 unless `host` says otherwise;
 * `close()` stops it.
 *
 * @example
 * const inspector = await startInspector({ runtime, store, port: 0, sessionId: session.id });
 * console.log(`Inspector: ${inspector.url}`);
 * await inspector.close();
 */
export function startInspector(options: InspectorOptions): Promise<InspectorHandle> {
  return start(options);
}
