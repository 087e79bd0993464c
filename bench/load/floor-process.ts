/**
 * The floor of the load benchmark: what a server of this shape costs on this machine at this
 * moment, without Steward. The users drive it as they drive `steward serve`; it answers each
 * action with the view a real `tiny` session showed at that point and makes, through the same
 * `openai` client and to the same model server, the model calls that session made for it — but
 * it keeps no store, runs no chart and checks nothing. What it adds to an action is the
 * machine's share of Steward's figures: HTTP both ways, the client's reading of the model's
 * reply, and five processes on two cores. The flow is recorded at its start from one real
 * session on a MemoryStore with the demo model, so it follows the package as it is.
 *
 * Speaks server-process.ts's messages, so the driver runs and reads it like a Steward server.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DemoModel } from '../../src/models/demo-model.js';
import type { ModelReply, ModelRequest } from '../../src/models/model.js';
import { OpenAIModel } from '../../src/models/openai-model.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import type { SessionView } from '../../src/runtime/view.js';
import { startServe } from '../../src/serve/server.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { nextEvent } from '../../test/serve/http.js';
import { MARKER } from './numbers.js';
import { answerDriver, recordSend, sendTimes } from './driver-link.js';
import type { ServerConfig } from './server-process.js';

/** One user action of the recorded session: the model calls it made, and the view it answered. */
interface Step {
  calls: Array<Pick<ModelRequest, 'agent' | 'messages' | 'tools'>>;
  view: SessionView;
}

/** The marker number the recording runs under; each replayed session puts its own in its place. */
const RECORDED = '917364';

/** Plays one `tiny` session to its end through an in-process `steward serve`, keeping what each action did. */
async function record(): Promise<{ created: SessionView; steps: Step[] }> {
  let calls: Step['calls'] = [];
  const demo = new DemoModel();
  const model = {
    label: demo.label,
    complete(request: ModelRequest): Promise<ModelReply> {
      calls.push(JSON.parse(JSON.stringify({ agent: request.agent, messages: request.messages, tools: request.tools })) as Step['calls'][number]);
      return demo.complete(request);
    },
  };
  const store = new MemoryStore();
  const server = await startServe({ runtime: createRuntime({ model, store }), store, port: 0, maxCreatesPerMinute: 0, log: () => {} });
  try {
    const post = async (path: string, body: unknown) => {
      const res = await fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      if (!res.ok) throw new Error(`recording the floor's session: POST ${path} answered ${res.status}: ${await res.text()}`);
      return (await res.json()) as { view: SessionView };
    };
    const created = (await post('/sessions', { packageId: 'tiny' })).view;
    const steps: Step[] = [];
    let view = created;
    while (view.phase !== 'done') {
      if (steps.length > 50) throw new Error("recording the floor's session: the tiny package did not finish in 50 actions");
      calls = [];
      view = (
        await post(`/sessions/${encodeURIComponent(created.id)}/events`, nextEvent(view, `[load-${RECORDED}] Write a short note about topic ${RECORDED}.`))
      ).view;
      steps.push({ calls, view });
    }
    return { created, steps };
  } finally {
    await server.close();
  }
}

/** `value` with the recorded session's id and marker replaced by another session's. */
function retold<T>(value: T, id: string, marker: string, recordedId: string): T {
  return JSON.parse(JSON.stringify(value).split(recordedId).join(id).split(RECORDED).join(marker)) as T;
}

async function readBody(req: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of req) text += String(chunk);
  return text;
}

function answer(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function main(): Promise<void> {
  const config = JSON.parse(process.env.LOAD_SERVER_CONFIG ?? '{}') as ServerConfig;
  const { created, steps } = await record();
  const model = new OpenAIModel({ model: 'load-bench', baseURL: config.llmBaseURL, apiKey: 'none', maxRetries: 4 });
  const sessions = new Map<string, { marker: string; step: number }>();
  const sends = sendTimes();
  let underWay = 0;
  let next = 0;

  const viewOf = (id: string, step: number, marker: string) => retold(step === 0 ? created : steps[step - 1]!.view, id, marker, created.id);

  async function send(id: string, body: string, res: ServerResponse): Promise<void> {
    const session = sessions.get(id);
    const step = session ? steps[session.step] : undefined;
    if (!session || !step) return answer(res, 404, { ok: false, error: { code: 'session_not_found' } });
    const text = (JSON.parse(body) as { text?: unknown }).text;
    const given = typeof text === 'string' ? MARKER.exec(text)?.[1] : undefined;
    if (given !== undefined) session.marker = given;
    const start = performance.now();
    let modelMs = 0;
    underWay += 1;
    try {
      for (const call of step.calls) {
        const began = performance.now();
        await model.complete(retold(call, id, session.marker, created.id));
        modelMs += performance.now() - began;
      }
    } finally {
      underWay -= 1;
    }
    session.step += 1;
    recordSend(sends, start, modelMs);
    answer(res, 200, { ok: true, view: viewOf(id, session.step, session.marker), revision: session.step });
  }

  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://floor').pathname.split('/').map(decodeURIComponent);
    void readBody(req)
      .then(async (body) => {
        if (req.method === 'POST' && path.length === 2 && path[1] === 'sessions') {
          const id = `floor-${next++}`;
          sessions.set(id, { marker: RECORDED, step: 0 });
          return answer(res, 201, { view: viewOf(id, 0, RECORDED), revision: 0 });
        }
        if (req.method === 'POST' && path.length === 4 && path[3] === 'events') return send(path[2]!, body, res);
        const session = sessions.get(path[2] ?? '');
        if (req.method === 'GET' && path.length === 3 && session)
          return answer(res, 200, { view: viewOf(path[2]!, session.step, session.marker), revision: session.step });
        answer(res, 404, { ok: false, error: { code: 'not_found' } });
      })
      .catch((error: unknown) => answer(res, 500, { ok: false, error: { code: 'floor_failed', message: String(error) } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  answerDriver({
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    sends,
    figures: () => ({ storeMs: 0, storeCalls: 0, storeByMethod: {}, storeCallMs: {}, held: underWay, claims: [], renewalMs: [], leasesLost: 0 }),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  });
}

void main().catch((error: unknown) => {
  process.stderr.write(`load floor: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
