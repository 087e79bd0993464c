// The page the useSession test opens in Chromium: one component on the hook, its state as
// JSON for the test to read, and its `send` on window for the test to call.
import { StrictMode, useEffect } from 'react';
import { createRoot } from 'react-dom/client';
import { StewardClient } from '../../src/client.js';
import { useSession, type UseSession } from '../../src/react.js';

declare global {
  interface Window {
    session?: UseSession;
    /** Every state the component committed, in order. */
    commits: { state: string | null; enabledEvents: readonly string[] }[];
  }
}

window.commits = [];
const params = new URLSearchParams(location.search);
const client = new StewardClient({ baseUrl: '/api', token: params.get('token')! });

function Session({ id }: { id: string }) {
  const session = useSession(client, id);
  window.session = session;
  const { view, events, draft, enabledEvents, status, error } = session;
  const shown = { state: view?.state ?? null, status, enabledEvents, draft, events: events.map((e) => e.type), error: error?.message ?? null };
  useEffect(() => {
    window.commits.push({ state: shown.state, enabledEvents: shown.enabledEvents });
  });
  return <pre id="session">{JSON.stringify(shown)}</pre>;
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <Session id={params.get('id')!} />
  </StrictMode>,
);
