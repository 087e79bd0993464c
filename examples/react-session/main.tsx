import { createRoot } from 'react-dom/client';
import { StewardClient } from 'steward/client';
import { App } from './App.js';

// Where `steward serve` answers and its token: from the page's address, e.g.
// ?api=http://127.0.0.1:4800&token=secret (the server lists this page's origin: --cors-origin).
const params = new URLSearchParams(location.search);
const client = new StewardClient({ baseUrl: params.get('api') ?? 'http://127.0.0.1:4800', token: params.get('token') ?? '' });

createRoot(document.getElementById('root')!).render(<App client={client} packageId={params.get('package') ?? 'tiny'} />);
