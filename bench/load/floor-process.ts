/**
 * The floor of the load benchmark: what a server of this shape costs on this machine at this
 * moment, without Steward. The users drive it as they drive `steward serve`; it answers each
 * action with the view a real `tiny` session showed at that point and makes, through the same
 * `openai` client and to the same model server, the model calls that session made for it — but
 * it keeps no store, runs no chart and checks nothing. What it adds to an action is the
 * machine's share of Steward's figures: HTTP both ways, the client's reading of the model's
 * reply, and the users, this server and the model server in three processes on two cores. The
 * flow is recorded at its start from one real session on a MemoryStore with the demo model, so
 * it follows the package as it is (that recording is the only Steward code it runs). The
 * recorded views and calls are kept as JSON text, so a replayed action costs a string
 * replacement, not a copy of the view.
 *
 * Speaks server-process.ts's messages, so the driver runs and reads it like a Steward server.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DemoModel } from '../../src/models/demo-model.js';
import type { ModelReply, ModelRequest } from '../../src/core/models/model.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import type { SessionView } from '../../src/core/view.js';
import { startServe } from '../../src/serve/server.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { client, nextEvent } from '../../test/serve/http.js';
import { markerIn, requestFor } from './numbers.js';
import { answerDriver, loadModel, recordSend, sendTimes } from './driver-link.js';
import type { ServerConfig } from './server-process.js';

/** One user action of the recorded session, as JSON text: the model calls it made, and the view it answered. */
interface Step {
  calls: string[];
  view: string;
}

/** The marker number the recording runs under; each replayed session puts its own in its place. */
const RECORDED = '917364';

/** Plays one `tiny` session to its end through an in-process `steward serve`, keeping what each action did. */
async function record(): Promise<{ id: string; created: string; steps: Step[] }> {
  let calls: string[] = [];
  const demo = new DemoModel();
  const model = {
    label: demo.label,
    complete(request: ModelRequest): Promise<ModelReply> {
      calls.push(JSON.stringify({ agent: request.agent, messages: request.messages, tools: request.tools }));
      return demo.complete(request);
    },
  };
  const store = new MemoryStore();
  const server = await startServe({ runtime: createRuntime({ model, store }), store, port: 0, maxCreatesPerMinute: 0, log: () => {} });
  try {
    const http = client(server.url);
    const post = async (path: string, body: unknown) => {
      const reply = await http.post<{ view: SessionView }>(path, body);
      if (reply.status >= 300) throw new Error(`recording the floor's session: POST ${path} answered ${reply.status}: ${JSON.stringify(reply.body)}`);
      return reply.body;
    };
    const created = (await post('/sessions', { packageId: 'tiny' })).view;
    const steps: Step[] = [];
    let view = created;
    while (view.phase !== 'done') {
      if (steps.length > 50) throw new Error("recording the floor's session: the tiny package did not finish in 50 actions");
      calls = [];
      view = (await post(`/sessions/${encodeURIComponent(created.id)}/events`, nextEvent(view, requestFor(RECORDED)))).view;
      steps.push({ calls, view: JSON.stringify(view) });
    }
    return { id: created.id, created: JSON.stringify(created), steps };
  } finally {
    await server.close();
  }
}

/** Recorded JSON text with the recorded session's id and marker replaced by another session's. */
function retold(json: string, recordedId: string, id: string, marker: string): string {
  return json.split(recordedId).join(id).split(RECORDED).join(marker);
}

async function readBody(req: IncomingMessage): Promise<string> {
  req.setEncoding('utf8');
  let text = '';
  for await (const chunk of req) text += chunk as string;
  return text;
}

function answer(res: ServerResponse, status: number, json: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json), ...headers });
  res.end(json);
}

const error = (code: string) => JSON.stringify({ ok: false, error: { code } });

async function main(): Promise<void> {
  const config = JSON.parse(process.env.LOAD_SERVER_CONFIG ?? '{}') as ServerConfig;
  const recorded = await record();
  const model = loadModel(config.llmBaseURL);
  const sessions = new Map<string, { marker: string; step: number }>();
  const sends = sendTimes();
  let underWay = 0;
  let next = 0;

  const viewOf = (id: string, session: { marker: string; step: number }) =>
    retold(session.step === 0 ? recorded.created : recorded.steps[session.step - 1]!.view, recorded.id, id, session.marker);

  async function send(id: string, body: string, res: ServerResponse): Promise<void> {
    const session = sessions.get(id);
    if (!session) return answer(res, 404, error('session_not_found'));
    const step = recorded.steps[session.step];
    if (!step) return answer(res, 409, error('session_done'));
    let event: unknown;
    try {
      event = JSON.parse(body);
    } catch {
      return answer(res, 400, error('invalid_request'));
    }
    // As `steward serve --max-running`: the same users wait out the same 429s.
    if (config.maxRunning && underWay >= config.maxRunning) return answer(res, 429, error('server_busy'), { 'retry-after': '1' });
    session.marker = markerIn(event) ?? session.marker;
    const start = performance.now();
    let modelMs = 0;
    underWay += 1;
    try {
      for (const call of step.calls) {
        const began = performance.now();
        await model.complete(JSON.parse(retold(call, recorded.id, id, session.marker)) as ModelRequest);
        modelMs += performance.now() - began;
      }
    } finally {
      underWay -= 1;
    }
    session.step += 1;
    recordSend(sends, start, modelMs);
    answer(res, 200, `{"ok":true,"view":${viewOf(id, session)},"revision":${session.step}}`);
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    const path = new URL(req.url ?? '/', 'http://floor').pathname.split('/').map(decodeURIComponent);
    if (path[1] !== 'sessions') return answer(res, 404, error('not_found'));
    if (req.method === 'POST' && path.length === 2) {
      const id = `floor-${next++}`;
      const session = { marker: RECORDED, step: 0 };
      sessions.set(id, session);
      return answer(res, 201, `{"view":${viewOf(id, session)},"revision":0}`);
    }
    if (req.method === 'POST' && path.length === 4 && path[3] === 'events') return send(path[2]!, body, res);
    const session = sessions.get(path[2] ?? '');
    if (req.method === 'GET' && path.length === 3 && session) return answer(res, 200, `{"view":${viewOf(path[2]!, session)},"revision":${session.step}}`);
    answer(res, 404, error('not_found'));
  }

  const server = createServer((req, res) => {
    route(req, res).catch((failure: unknown) => answer(res, 500, JSON.stringify({ ok: false, error: { code: 'floor_failed', message: String(failure) } })));
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

void main().catch((failure: unknown) => {
  process.stderr.write(`load floor: ${failure instanceof Error ? (failure.stack ?? failure.message) : String(failure)}\n`);
  process.exit(1);
});
