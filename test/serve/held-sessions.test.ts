/**
 * HeldSessions' edges a server's tests do not reach on purpose (held-sessions.ts). A parked
 * session's first write takes its lease in its own statement (`rearm`): when that grant comes
 * back after the hold ended — a timer's write still under way when the last request let the
 * session go — nobody here runs on it: it is given back, and no keeper renews it (else no
 * other server could take the session until this one stopped). And a parked copy taken for a
 * send that cannot start is closed, not left running with no hold.
 */
import { describe, expect, it } from 'vitest';
import { HeldSessions, type Held } from '../../src/serve/held-sessions.js';
import type { LiveEvents } from '../../src/serve/live-events.js';
import type { Runtime } from '../../src/runtime/runtime.js';
import type { LeaseRearm } from '../../src/runtime/session-lease.js';
import type { Lease, SessionStore } from '../../src/store/session-store.js';
import { createRuntime, MemoryStore } from '../../src/index.js';

/** HeldSessions over a store whose only lease call made here is the release, recorded (a keeper's first renewal is a third of a minute away). */
function heldSessions(live: Partial<LiveEvents> = {}): { sessions: HeldSessions; released: Lease[] } {
  const released: Lease[] = [];
  const leases = { releaseLease: async (lease: Lease) => void released.push(lease) };
  const store = { leases } as unknown as SessionStore;
  const sessions = new HeldSessions({} as Runtime, store, { owner: 'server-a', leaseMs: 60_000, live: live as LiveEvents, log: () => {}, keepLoaded: 10 });
  return { sessions, released };
}

/** The rearm a parked session of `held` is resumed with (private to HeldSessions). */
const rearmOf = (sessions: HeldSessions, held: Held, id: string): LeaseRearm =>
  (sessions as unknown as { rearm(held: Held, id: string): LeaseRearm }).rearm(held, id);

const heldFor = (granting: boolean): Held => ({
  ready: Promise.resolve(null as never),
  session: null,
  users: granting ? 1 : 0,
  keeper: null,
  unsubscribe: null,
  run: 'run-1',
  published: 0,
  verified: false,
  granting: granting ? { settled: Promise.resolve(), settle: () => {} } : null,
  stale: null,
  restartedFrom: null,
});

describe('a grant for a parked session', () => {
  const lease: Lease = { sessionId: 's1', owner: 'server-a', token: 7 };

  it('is kept while the hold that asked for it lasts, and given back with it', async () => {
    const { sessions, released } = heldSessions();
    const held = heldFor(true);
    const rearm = rearmOf(sessions, held, 's1');
    expect(rearm.grantWanted()).toEqual({ owner: 'server-a', ms: 60_000 });
    rearm.granted(lease, performance.now());
    expect(held.keeper?.lease).toEqual(lease);
    expect(rearm.current()).toEqual(lease);
    await held.keeper!.release();
    expect(released).toEqual([lease]);
  });

  it('that comes back after the hold ended is given back at once, and the writes after it commit nothing', async () => {
    const { sessions, released } = heldSessions();
    const held = heldFor(false);
    const rearm = rearmOf(sessions, held, 's1');
    rearm.granted(lease, performance.now());
    expect(held.keeper).toBeNull();
    await expect.poll(() => released).toEqual([lease]);
    // Fenced by no grant: grants are numbered from 1.
    expect(rearm.current()).toEqual({ sessionId: 's1', owner: 'server-a', token: 0 });
  });
});

describe('a parked session taken for a send', () => {
  it('is closed when the send cannot start (the live events bus fails), not left running with no hold', async () => {
    const runtime = createRuntime({ model: { label: 'unused', complete: () => Promise.reject(new Error('not called')) }, store: new MemoryStore() });
    const session = await runtime.createSession({ packageId: 'tiny' });
    const { sessions } = heldSessions({ hear: () => Promise.reject(new Error('the bus is down')) });
    const held = { ...heldFor(false), session };
    (sessions as unknown as { parked: Map<string, Held> }).parked.set(session.id, held);
    const taken = sessions.hold(session.id);
    await expect(taken.ready).rejects.toThrow('the bus is down');
    expect(session.isActive).toBe(false);
    expect(runtime.live.has(session.id)).toBe(false);
    await sessions.release(session.id, taken);
    expect(sessions.parkedCount).toBe(0);
  });
});
