/** Drives an AG-UI thread with `@ag-ui/client`'s HttpAgent (its own event verification on) and keeps what each run emitted. */
import { HttpAgent, type BaseEvent, type Interrupt } from '@ag-ui/client';

/** An event as the run delivered it (fields read by name in the tests). */
export type WireEvent = BaseEvent & { [key: string]: any };

export interface RunRecord {
  events: WireEvent[];
  error?: unknown;
}

export function agUiAgent(url: string, threadId: string, token?: string) {
  const agent = new HttpAgent({ url, threadId, ...(token ? { headers: { authorization: `Bearer ${token}` } } : {}) });
  let runs = 0;
  const run = async (params: Parameters<HttpAgent['runAgent']>[0] = {}): Promise<RunRecord> => {
    const record: RunRecord = { events: [] };
    try {
      await agent.runAgent({ runId: `run-${threadId}-${++runs}`, ...params }, { onEvent: ({ event }) => void record.events.push(event) });
    } catch (error) {
      record.error = error;
    }
    return record;
  };
  return {
    agent,
    run,
    /** Answers the (one) open interrupt. */
    resume: (interrupt: Interrupt, payload: unknown) => run({ resume: [{ interruptId: interrupt.id, status: 'resolved', payload }] }),
    get interrupt(): Interrupt | undefined {
      return agent.pendingInterrupts[0];
    },
    get state(): any {
      return agent.state;
    },
  };
}

export const types = (record: RunRecord) => record.events.map((e) => e.type);
export const runError = (record: RunRecord) =>
  record.events.find((e) => e.type === 'RUN_ERROR') as (BaseEvent & { code?: string; message: string }) | undefined;
