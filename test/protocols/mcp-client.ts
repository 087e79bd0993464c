/**
 * What the MCP tests share: the SDK's own client (`@modelcontextprotocol/client`) on either
 * protocol, a host's person who answers each form from a script (and keeps the forms it was
 * shown), and the manual multi-round-trip call a host makes when it answers by itself.
 */
import { Client, StreamableHTTPClientTransport, withInputRequired, specTypeSchemas, type InputRequiredResult } from '@modelcontextprotocol/client';
import type { Transport } from '@modelcontextprotocol/client';

/** A form as the host was asked it: its message and its (flat) schema. */
export interface ShownForm {
  message: string;
  requestedSchema: { type: 'object'; properties: Record<string, Record<string, unknown>>; required?: string[] };
}

/** What the person answers to one form: accept with content, or decline / cancel. */
export type FormAnswer = { action: 'accept'; content: Record<string, unknown> } | { action: 'decline' } | { action: 'cancel' };

/** The person: answers each form in turn with `answer(form, n)`, keeping every form shown. */
export function scriptedPerson(answer: (form: ShownForm, n: number) => FormAnswer) {
  const shown: ShownForm[] = [];
  return {
    shown,
    handle: (request: { params: unknown }) => {
      const form = request.params as ShownForm;
      shown.push(form);
      return Promise.resolve(answer(form, shown.length - 1));
    },
  };
}

/** A person who says yes to everything: accepts each form with the answer made from what it asks. */
export function agreeable(form: ShownForm): FormAnswer {
  const fields = form.requestedSchema.properties;
  const content: Record<string, unknown> = {};
  if ('approved' in fields) content.approved = true;
  else if ('accepted' in fields) content.accepted = true;
  else if ('confirm' in fields) content.confirm = true;
  else if ('text' in fields) content.text = 'Go on as you see fit.';
  for (const key of Object.keys(fields)) if (key.startsWith('answers.')) content[key] = 'Your call.';
  return { action: 'accept', content };
}

export type Era = 'modern' | 'legacy';

/** A client on `era`'s protocol (2026-07-28, or the SDK's default 2025 handshake) that answers forms with `person`, connected over `transport`. */
export async function mcpClient(transport: Transport, era: Era, person?: ReturnType<typeof scriptedPerson>, manual = false): Promise<Client> {
  const client = new Client(
    { name: 'steward-test-host', version: '1.0.0' },
    {
      capabilities: { elicitation: { form: {} } },
      ...(era === 'modern' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {}),
      inputRequired: { autoFulfill: !manual, maxRounds: 60 },
    },
  );
  if (person) client.setRequestHandler('elicitation/create', person.handle as never);
  await client.connect(transport);
  return client;
}

/** Streamable HTTP to `url` with the bearer `token`. */
export const httpTransport = (url: string, token: string) =>
  new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } });

type CallResult = Awaited<ReturnType<Client['callTool']>> | InputRequiredResult;

/** One round of a call, answered by hand: `input_required` comes back to the caller instead of being fulfilled. */
export async function callRound(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  round?: { requestState?: string; inputResponses?: Record<string, unknown> },
): Promise<CallResult> {
  return (await client.request(
    { method: 'tools/call', params: { name, arguments: args, ...(round ?? {}) } },
    withInputRequired(specTypeSchemas.CallToolResult),
    { allowInputRequired: true },
  )) as CallResult;
}

export const isInputRequired = (r: CallResult): r is InputRequiredResult => (r as { resultType?: string }).resultType === 'input_required';

/** The text of a tool result's content. */
export const textOf = (r: CallResult): string =>
  ((r as { content?: { type: string; text?: string }[] }).content ?? []).map((c) => (c.type === 'text' ? c.text : '')).join('\n');
