// A page's code against the installed steward/client and steward/react, compiled with
// `tsc --strict` as nodenext, bundler and DOM-only (no Node types) projects.
import { createElement, type ReactElement } from 'react';
import { RequestError, SessionNotFoundError, StewardClient, type SendAnswer, type StreamMessage, type UserEvent } from 'steward/client';
import { useSession, type Draft } from 'steward/react';

const client = new StewardClient({ baseUrl: 'http://127.0.0.1:4800', token: () => 'secret', fetch: (input, init) => fetch(input, init) });

export async function drive(id: string): Promise<string> {
  const { view } = await client.create({ packageId: 'tiny' });
  const event: UserEvent = { type: 'user_submitted_input', text: 'Green tea.' };
  const answer: SendAnswer = await client.send(view.id, event);
  // @ts-expect-error not a user event
  await client.send(view.id, { type: 'user_danced' });
  const accepted = await client.send(id, { type: 'user_confirmed_intake' }, { wait: false, idempotencyKey: 'k1' });
  const page = await client.list({ limit: 10, after: null });
  const journal = await client.journal(id, { after: 0 });
  const ticket = await client.streamTicket(id);
  for await (const message of client.stream(id, { signal: AbortSignal.timeout(1000) }) as AsyncIterable<StreamMessage>) {
    if (message.type === 'session' && message.event.type === 'artifact_delta') return message.event.delta;
  }
  try {
    await client.get('missing');
  } catch (error) {
    if (SessionNotFoundError.isInstance(error)) return error.sessionId;
    if (RequestError.isInstance(error)) return `${error.code} ${error.status}`;
  }
  return `${answer.ok} ${accepted.ok} ${page.next} ${journal.entries.length} ${ticket.expiresAt}`;
}

export function Session({ id }: { id: string }): ReactElement {
  const { view, draft, enabledEvents, send, status, error } = useSession(client, id);
  const shown: Draft | null = draft;
  const approve = () => send({ type: 'user_approved_next_step', edits: { reason: 'Shorter.' } });
  return createElement(
    'button',
    { onClick: approve, disabled: !enabledEvents.includes('user_approved_next_step') },
    `${view?.state} ${status} ${error?.message} ${shown?.tags.note}`,
  );
}
