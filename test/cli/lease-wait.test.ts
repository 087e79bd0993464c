/**
 * `steward resume` waiting out another process's lease (src/cli/lease-wait.ts): said once,
 * with how long; over when the lease is free; ended with the error when the lease is held
 * still after it should have run out (renewed: its holder lives); at once with --fail-fast.
 */
import { describe, expect, it } from 'vitest';
import { retryWhileLeased } from '../../src/cli/lease-wait.js';
import { SessionLeasedError, SessionNotFoundError } from '../../src/core/errors.js';

const leased = (expiresInMs: number | null) => new SessionLeasedError('s_1', 'steward send on web-7 pid 4242', expiresInMs);

/** An attempt that fails with `errors` in turn, then resolves 'resumed'; counts its calls. */
function attempts(...errors: Error[]) {
  const calls = { n: 0 };
  const attempt = async () => {
    const error = errors[calls.n++];
    if (error) throw error;
    return 'resumed';
  };
  return { attempt, calls };
}

describe('retryWhileLeased', () => {
  it('--fail-fast: the first refusal ends it, and nothing is said', async () => {
    const said: string[] = [];
    const { attempt, calls } = attempts(leased(30_000));
    await expect(retryWhileLeased(attempt, { wait: false, say: (line) => said.push(line) })).rejects.toBeInstanceOf(SessionLeasedError);
    expect(calls.n).toBe(1);
    expect(said).toEqual([]);
  });

  it('says once how long it may wait and for whom, and goes on once the lease is free', async () => {
    const said: string[] = [];
    const { attempt, calls } = attempts(leased(30_000), leased(29_000));
    await expect(retryWhileLeased(attempt, { wait: true, say: (line) => said.push(line), everyMs: 1 })).resolves.toBe('resumed');
    expect(calls.n).toBe(3);
    expect(said).toEqual(['Waiting up to 30 s for the lease held by steward send on web-7 pid 4242 to run out (--fail-fast: fail at once).']);
  });

  it('a lease held still once it should have run out was renewed: its error ends the wait', async () => {
    let calls = 0;
    const renewed = leased(20);
    const attempt = async (): Promise<string> => {
      calls += 1;
      throw calls === 1 ? leased(20) : renewed;
    };
    await expect(retryWhileLeased(attempt, { wait: true, say: () => {} })).rejects.toBe(renewed);
    expect(calls).toBeGreaterThanOrEqual(2);
  });

  it('other errors end it at once', async () => {
    const { attempt, calls } = attempts(new SessionNotFoundError('s_1'));
    await expect(retryWhileLeased(attempt, { wait: true, say: () => {} })).rejects.toBeInstanceOf(SessionNotFoundError);
    expect(calls.n).toBe(1);
  });
});
