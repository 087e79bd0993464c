/**
 * Visual tooling: the statechart as data and text, remote inspectors (Stately, WebSocket),
 * Steward's local inspector page, and `stately.config.json`.
 *
 * @example Wiring an inspect mode into a command (off | local | stately | ws://…):
 * const inspection = setupInspection(mode, (msg) => process.stderr.write(`${msg}\n`));
 * const runtime = createRuntime({ model, store, ...(inspection.inspect ? { inspect: inspection.inspect } : {}) });
 * const page = await inspection.attach(runtime, store, session.id); // 'local': starts the page
 * if (page) console.log(`Inspector: ${page.url}`);
 * // … when done:
 * await inspection.stop();
 */
import type { InspectionEvent } from 'xstate';
import { UserError } from '../core/errors.js';
import type { Runtime } from '../runtime/runtime.js';
import type { SessionStore } from '../store/session-store.js';
import type { InspectMode } from './config.js';
import { startInspector, type InspectorHandle } from './server.js';
import { createRemoteInspect, type RemoteTarget } from './stately.js';

export interface Inspection {
  /** For `createRuntime({ inspect })`: set for 'stately' and ws:// modes. */
  inspect?: (event: InspectionEvent) => void;
  /** Where the remote inspector shows the session ('stately', ws://). */
  url?: string;
  /** 'local': starts the inspector page on the runtime (host, port and layoutsDir from the options). Otherwise resolves undefined. */
  attach(
    runtime: Runtime,
    store: SessionStore | undefined,
    sessionId?: string,
    options?: { host?: string; port?: number; layoutsDir?: string },
  ): Promise<InspectorHandle | undefined>;
  stop(): Promise<void>;
}

/**
 * Checks an inspect mode given on the command line; the message lists the valid ones.
 *
 * @example
 * const mode = parseInspectMode(process.argv[2] ?? 'off'); // 'off' | 'local' | 'stately' | 'ws://…'
 */
export function parseInspectMode(text: string): InspectMode {
  if (text === 'off' || text === 'local' || text === 'stately' || /^wss?:\/\/\S+$/.test(text)) return text as InspectMode;
  throw new UserError(`Unknown inspect mode "${text}": use off, local, stately or a WebSocket URL such as ws://127.0.0.1:8080.`);
}

/**
 * One inspect mode, ready to wire into a runtime; unreachable remote targets never stop a session.
 *
 * @example
 * const inspection = setupInspection('stately', (msg) => console.error(msg));
 * const runtime = createRuntime({ model, store, ...(inspection.inspect ? { inspect: inspection.inspect } : {}) });
 * if (inspection.url) console.log(`Inspector: ${inspection.url}`);
 * await inspection.stop();
 */
export function setupInspection(mode: InspectMode, log: (msg: string) => void): Inspection {
  let page: InspectorHandle | undefined;
  if (mode === 'stately' || mode.startsWith('ws://') || mode.startsWith('wss://')) {
    const remote = createRemoteInspect(mode as RemoteTarget, log);
    return {
      inspect: remote.inspect,
      ...(remote.url ? { url: remote.url } : {}),
      attach: async () => undefined,
      stop: async () => remote.stop(),
    };
  }
  return {
    attach: async (runtime, store, sessionId, options = {}) => {
      if (mode !== 'local') return undefined;
      if (!store) throw new UserError('The local inspector needs a store: createRuntime({ model, store }).');
      page = await startInspector({ runtime, store, ...options, ...(sessionId ? { sessionId } : {}), log });
      return page;
    },
    stop: async () => {
      await page?.close();
    },
  };
}
