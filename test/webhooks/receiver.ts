/**
 * A webhook receiver for tests, on 127.0.0.1: it verifies every request with the
 * `standardwebhooks` library (`Webhook.verify`), keeps what it got, and answers with the
 * status `answer` picks (or holds the request open when `answer` returns 'hold').
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export const TEST_SECRET = `whsec_${Buffer.from('a test secret of thirty-two bytes').toString('base64')}`;

export interface Received {
  id: string;
  body: { type: string; timestamp: string; data: Record<string, unknown> & { sessionId: string } };
  verified: boolean;
}

export async function startReceiver(answer: (n: number, received: Received) => number | 'hold' = () => 204, secret = TEST_SECRET) {
  const received: Received[] = [];
  const held: ServerResponse[] = [];
  const waiters: Array<() => void> = [];
  const verifier = new Webhook(secret);
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let verified = true;
      try {
        verifier.verify(text, req.headers as Record<string, string>);
      } catch {
        verified = false;
      }
      const entry = { id: String(req.headers['webhook-id']), body: JSON.parse(text), verified };
      received.push(entry);
      for (const wake of waiters.splice(0)) wake();
      const status = answer(received.length, entry);
      if (status === 'hold') held.push(res);
      else res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return {
    url,
    received,
    /** Resolves once `n` requests have arrived. */
    async until(n: number): Promise<void> {
      while (received.length < n) await new Promise<void>((resolve) => waiters.push(resolve));
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of held) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
