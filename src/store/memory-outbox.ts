/**
 * MemoryStore's webhook outbox: messages in a Map, copied in and out like the store's rows.
 * The store adds an entry's messages in the same synchronous step as the entry, so a failed
 * append adds none.
 */
import { clip } from '../core/limits.js';
import { OUTBOX_ERROR_CHARS, type OutboxClaim, type OutboxInput, type OutboxMessage, type OutboxOps } from './outbox.js';

export class MemoryOutbox implements OutboxOps {
  private readonly messages = new Map<string, OutboxMessage>();
  private readonly listeners = new Set<() => void>();

  /** Copies of the messages, ready to add once the entry's write cannot fail any more. */
  prepare(sessionId: string, entrySeq: number, at: string, inputs: readonly OutboxInput[] | undefined): OutboxMessage[] {
    return (inputs ?? []).map((input) => ({
      id: input.id,
      receiver: input.receiver,
      type: input.type,
      payload: structuredClone(input.payload),
      sessionId,
      entrySeq,
      createdAt: at,
      status: 'pending',
      attempts: 0,
      nextAt: 0,
      lastError: null,
    }));
  }

  /** Adds prepared messages (the entry's write succeeded) and wakes the watchers. */
  add(messages: readonly OutboxMessage[]): void {
    if (!messages.length) return;
    for (const message of messages) this.messages.set(message.id, message);
    this.wake();
  }

  async claim({ receivers, now, claimMs, limit }: OutboxClaim): Promise<OutboxMessage[]> {
    const due = [...this.messages.values()]
      .filter((m) => m.status === 'pending' && m.nextAt <= now && receivers.includes(m.receiver))
      .sort((a, b) => a.nextAt - b.nextAt)
      .slice(0, limit);
    for (const message of due) message.nextAt = now + claimMs;
    return structuredClone(due);
  }

  async delivered(id: string): Promise<void> {
    this.messages.delete(id);
  }

  async retryLater(id: string, { attempts, nextAt, error }: { attempts: number; nextAt: number; error: string }): Promise<void> {
    const message = this.messages.get(id);
    if (message) Object.assign(message, { attempts, nextAt, lastError: clip(error, OUTBOX_ERROR_CHARS) });
  }

  async deadLetter(id: string, { attempts, error }: { attempts: number; error: string }): Promise<void> {
    const message = this.messages.get(id);
    if (message) Object.assign(message, { status: 'dead', attempts, lastError: clip(error, OUTBOX_ERROR_CHARS) });
  }

  async counts(): Promise<{ pending: number; dead: number }> {
    let dead = 0;
    for (const message of this.messages.values()) if (message.status === 'dead') dead += 1;
    return { pending: this.messages.size - dead, dead };
  }

  async deadLetters(limit: number): Promise<OutboxMessage[]> {
    const dead = [...this.messages.values()].filter((m) => m.status === 'dead').reverse();
    return structuredClone(dead.slice(0, Math.max(0, limit)));
  }

  async retryDead(id: string | undefined, now: number): Promise<number> {
    let retried = 0;
    for (const message of this.messages.values()) {
      if (message.status !== 'dead' || (id !== undefined && message.id !== id)) continue;
      Object.assign(message, { status: 'pending', attempts: 0, nextAt: now });
      retried += 1;
    }
    if (retried) this.wake();
    return retried;
  }

  /** Tells the watchers (deliverers) that messages are due, after the current task. */
  private wake(): void {
    for (const listener of [...this.listeners]) queueMicrotask(listener);
  }

  async watch(listener: () => void): Promise<() => Promise<void>> {
    this.listeners.add(listener);
    return async () => {
      this.listeners.delete(listener);
    };
  }
}
