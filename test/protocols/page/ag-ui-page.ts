/** A web page built on `@ag-ui/client`: sends a request, then answers each interrupt with a button. Bundled by the browser test. */
import { HttpAgent, type Interrupt } from '@ag-ui/client';

const byId = (id: string) => document.getElementById(id)!;
const agent = new HttpAgent({ url: '/ag-ui/short-story', threadId: 'browser-thread' });

function show(error?: unknown): void {
  const open: Interrupt | undefined = agent.pendingInterrupts[0];
  byId('reason').textContent = open?.reason ?? 'none';
  byId('message').textContent = open?.message ?? '';
  byId('phase').textContent = String((agent.state as { phase?: string } | undefined)?.phase ?? '');
  byId('error').textContent = error === undefined ? '' : String(error);
}

async function answer(payload: unknown): Promise<void> {
  const open = agent.pendingInterrupts[0];
  if (!open) return;
  try {
    await agent.runAgent({ resume: [{ interruptId: open.id, status: 'resolved', payload }] });
    show();
  } catch (error) {
    show(error);
  }
}

byId('send').addEventListener('click', async () => {
  agent.addMessage({ id: `user-${Date.now()}`, role: 'user', content: (byId('request') as HTMLInputElement).value });
  try {
    await agent.runAgent();
    show();
  } catch (error) {
    show(error);
  }
});
byId('approve').addEventListener('click', () => void answer({ approved: true }));
byId('accept').addEventListener('click', () => void answer({ accepted: true }));
