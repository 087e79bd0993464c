/**
 * A session of `steward serve`, driven from a page: useSession follows it (the view, the
 * draft as the worker writes it, what may be sent now); each wait gets its form — the
 * request, the step to approve (its task editable), the artifact to accept (its bodies editable).
 */
import { useEffect, useState } from 'react';
import type { StewardClient } from 'steward/client';
import { useSession } from 'steward/react';

// Sends answer at once (202): the run goes on on the server, the stream shows it.
const async = { wait: false } as const;

export function App({ client, packageId }: { client: StewardClient; packageId: string }) {
  const [id, setId] = useState<string | null>(null);
  useEffect(() => void client.create({ packageId }).then(({ view }) => setId(view.id)), [client, packageId]);
  return id ? <Session client={client} id={id} /> : <p>Creating a session…</p>;
}

function Session({ client, id }: { client: StewardClient; id: string }) {
  const { view, draft, enabledEvents, send, status, error } = useSession(client, id);
  const [text, setText] = useState('');
  const [edits, setEdits] = useState<Record<string, string>>({});
  const can = (type: string) => enabledEvents.includes(type as never);
  return (
    <main>
      <p>
        <b data-testid="state">{view?.state ?? 'loading'}</b> · stream {status} {error && <em role="alert">{error.message}</em>}
      </p>
      {view?.message && <p>{view.message}</p>}
      {draft && (
        <section data-testid="draft">
          <h3>{draft.worker} is writing…</h3>
          {Object.entries(draft.tags).map(([tag, body]) => (
            <pre key={tag}>
              #{tag}: {body}
            </pre>
          ))}
        </section>
      )}
      {can('user_submitted_input') && (
        <form onSubmit={(e) => (e.preventDefault(), send({ type: 'user_submitted_input', text }, async))}>
          <textarea name="input" value={text} onChange={(e) => setText(e.target.value)} />
          <button data-event="user_submitted_input">Send</button>
        </form>
      )}
      {can('user_confirmed_intake') && (
        <button data-event="user_confirmed_intake" onClick={() => send({ type: 'user_confirmed_intake' }, async)}>
          Confirm
        </button>
      )}
      {can('user_approved_next_step') && view?.pendingStep && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void send({ type: 'user_approved_next_step', ...(edits.reason ? { edits: { reason: edits.reason } } : {}) }, async).then(() => setEdits({}));
          }}
        >
          <p>Next: {view.pendingStep.workerId}</p>
          <textarea name="reason" defaultValue={view.pendingStep.reason} onChange={(e) => setEdits({ reason: e.target.value })} />
          <button data-event="user_approved_next_step">Approve</button>
        </form>
      )}
      {can('user_accepted_artifact') && view?.artifact && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            const changed = Object.keys(edits).length ? { edits } : {};
            void send({ type: 'user_accepted_artifact', artifactId: view.artifact!.id, ...changed }, async).then(() => setEdits({}));
          }}
        >
          {view.artifact.tags.map((t) => (
            <textarea
              key={`${view.artifact!.id}:${t.tag}`}
              name={t.tag}
              defaultValue={t.body}
              onChange={(e) => setEdits({ ...edits, [t.tag]: e.target.value })}
            />
          ))}
          <button data-event="user_accepted_artifact">Accept</button>
        </form>
      )}
      {view?.phase === 'done' && (
        <ul data-testid="blackboard">
          {view.blackboard.map((b) => (
            <li key={b.tag}>
              #{b.tag} v{b.version} by {b.writtenBy}
            </li>
          ))}
        </ul>
      )}
    </main>
  );
}
