/**
 * LeaseKeeper when the session's last write gives the lease up (AppendInput.releaseLease): no
 * renewal after the hand-over, a renewal that crossed it loses nothing, and the release after it
 * is sent only when that write did not commit. A scripted LeaseOps on fake timers.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LeaseKeeper } from '../../src/store/lease-keeper.js';
import type { Lease, LeaseOps } from '../../src/store/session-store.js';

const LEASE_MS = 300;
const lease: Lease = { sessionId: 's1', owner: 'server', token: 1 };

/** Renewals answer when the test says; releases are counted. */
function scriptedLeases() {
  const renewals: Array<(renewed: boolean) => void> = [];
  const released: Lease[] = [];
  const ops = {
    renewLease: () => new Promise<boolean>((resolve) => renewals.push(resolve)),
    releaseLease: async (given: Lease) => void released.push(given),
  } as unknown as LeaseOps;
  return { ops, renewals, released };
}

describe('LeaseKeeper: a lease given up with the last write', () => {
  afterEach(() => vi.useRealTimers());

  it('renews nothing after the hand-over, loses nothing to a renewal that crossed it, and sends no release once the write committed', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'setTimeout', 'clearTimeout', 'performance'] });
    const { ops, renewals, released } = scriptedLeases();
    const lost = vi.fn();
    const keeper = new LeaseKeeper(ops, lease, LEASE_MS, lost, () => {});
    await vi.advanceTimersByTimeAsync(LEASE_MS / 3);
    expect(renewals).toHaveLength(1);

    keeper.givingUpWithWrite();
    expect(keeper.isHeld()).toBe(false);
    // The write gave the lease up first: the renewal finds it gone, which is no loss.
    renewals[0]!(false);
    await vi.advanceTimersByTimeAsync(LEASE_MS * 3);
    expect(renewals).toHaveLength(1);
    expect(lost).not.toHaveBeenCalled();

    keeper.givenUp(true);
    await keeper.release();
    expect(released).toEqual([]);
    expect(keeper.lost).toBe(false);
  });

  it('sends the release after a write that was to give the lease up and did not commit, once it settled', async () => {
    const { ops, released } = scriptedLeases();
    const keeper = new LeaseKeeper(
      ops,
      lease,
      60_000,
      () => {},
      () => {},
    );
    keeper.givingUpWithWrite();
    let done = false;
    const releasing = keeper.release().then(() => (done = true));
    await Promise.resolve();
    expect(done).toBe(false);
    keeper.givenUp(false);
    await releasing;
    expect(released).toEqual([lease]);
  });
});
