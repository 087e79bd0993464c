/** `@a2a-js/sdk`'s own client, pointed at a package's agent on a test server, with the bearer token on every request. */
import { Message, SendMessageRequest, type StreamResponse, type Task } from '@a2a-js/sdk';
import { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';

export async function a2aClient(baseUrl: string, packageId: string, token?: string): Promise<Client> {
  const fetchImpl: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers);
    if (token) headers.set('authorization', `Bearer ${token}`);
    return fetch(input, { ...init, headers });
  };
  const factory = new ClientFactory({ transports: [new JsonRpcTransportFactory({ fetchImpl })], cardResolver: new DefaultAgentCardResolver({ fetchImpl }) });
  // The card is under the agent's path, not the host's root: its full URL, with no path added.
  return factory.createFromUrl(`${baseUrl}/a2a/${packageId}/.well-known/agent-card.json`, '');
}

let n = 0;
/** A user message: text and/or one data part, for a context or a task. */
export function request(
  parts: { text?: string; data?: unknown },
  ids: { contextId?: string; taskId?: string } = {},
  metadata?: Record<string, unknown>,
): SendMessageRequest {
  return SendMessageRequest.fromJSON({
    message: Message.toJSON(
      Message.fromJSON({
        messageId: `m-${++n}`,
        role: 'ROLE_USER',
        ...ids,
        ...(metadata ? { metadata } : {}),
        parts: [...(parts.text !== undefined ? [{ text: parts.text }] : []), ...(parts.data !== undefined ? [{ data: parts.data }] : [])],
      }),
    ),
  });
}

/** The data part of a task's status message: the wait's interrupt (reason, responseSchema, …). */
export function interruptOf(task: Task): { id: string; reason: string; responseSchema: Record<string, unknown>; message?: string } | undefined {
  const part = task.status?.message?.parts.find((p) => p.content?.$case === 'data');
  return part?.content?.$case === 'data' ? (part.content.value as { interrupt: never }).interrupt : undefined;
}

export function asTask(result: unknown): Task {
  if (!result || typeof result !== 'object' || !('status' in result)) throw new Error(`Not a task: ${JSON.stringify(result)}`);
  return result as Task;
}

/** A stream's responses by kind, e.g. ["task", "statusUpdate:TASK_STATE_WORKING", "artifactUpdate", "statusUpdate:TASK_STATE_INPUT_REQUIRED"]. */
export function kinds(events: readonly StreamResponse[]): string[] {
  return events.map((e) => {
    const p = e.payload;
    if (p?.$case === 'statusUpdate') return `status:${stateName(p.value.status?.state)}`;
    return p?.$case ?? 'none';
  });
}

const STATES: Record<number, string> = { 2: 'working', 3: 'completed', 6: 'input-required' };
export const stateName = (state: number | undefined) => STATES[state ?? -1] ?? String(state);

export async function collect(stream: AsyncIterable<StreamResponse>): Promise<StreamResponse[]> {
  const all: StreamResponse[] = [];
  for await (const event of stream) all.push(event);
  return all;
}
