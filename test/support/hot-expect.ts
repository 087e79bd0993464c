/**
 * Assertions for checks that run hundreds of thousands of times (the property tests'
 * invariants after every send): each call of vitest's expect() copies its matcher state and goes
 * through chai's proxies, which cost more than the check itself. These test the condition first
 * and call expect() only when it may fail, so a failure is reported exactly as expect() reports
 * it; each fast path passes only where the matcher passes too.
 */
import { isDeepStrictEqual } from 'node:util';
import { expect } from 'vitest';

/**
 * expect(actual, message).toBe(expected).
 *
 * @example
 * expectToBe(view.state, 'done', 'the session ends');
 */
export function expectToBe(actual: unknown, expected: unknown, message?: string): void {
  if (!Object.is(actual, expected)) expect(actual, message).toBe(expected);
}

/**
 * expect(actual, message).not.toBe(unexpected).
 *
 * @example
 * expectNotToBe(message.role, 'tool', 'a tool result follows its call');
 */
export function expectNotToBe(actual: unknown, unexpected: unknown, message?: string): void {
  if (Object.is(actual, unexpected)) expect(actual, message).not.toBe(unexpected);
}

/**
 * expect(actual, message).toEqual(expected); equal under Node's strict deep equality is equal for toEqual.
 *
 * @example
 * expectToEqual(queue, [], 'nothing is left queued');
 */
export function expectToEqual(actual: unknown, expected: unknown, message?: string): void {
  if (!isDeepStrictEqual(actual, expected)) expect(actual, message).toEqual(expected);
}

/**
 * expect(list, message).toContain(item), for an array.
 *
 * @example
 * expectToContain(['a', 'b'], state, 'a state it may be in');
 */
export function expectToContain<T>(list: readonly T[], item: T, message?: string): void {
  if (!list.includes(item) || Number.isNaN(item)) expect(list, message).toContain(item);
}

/**
 * expect(actual, message).toBeGreaterThan(than).
 *
 * @example
 * expectToBeGreaterThan(next.version, previous.version, 'versions ascend');
 */
export function expectToBeGreaterThan(actual: number, than: number, message?: string): void {
  if (!(actual > than)) expect(actual, message).toBeGreaterThan(than);
}

/**
 * expect(actual, message).toBeGreaterThanOrEqual(least).
 *
 * @example
 * expectToBeGreaterThanOrEqual(after.length, before.length, 'nothing disappears');
 */
export function expectToBeGreaterThanOrEqual(actual: number, least: number, message?: string): void {
  if (!(actual >= least)) expect(actual, message).toBeGreaterThanOrEqual(least);
}

/**
 * expect(actual, message).toBeLessThanOrEqual(most).
 *
 * @example
 * expectToBeLessThanOrEqual(burst, maxBurst, 'the burst stays within its limit');
 */
export function expectToBeLessThanOrEqual(actual: number, most: number, message?: string): void {
  if (!(actual <= most)) expect(actual, message).toBeLessThanOrEqual(most);
}

/**
 * expect(actual, message).toBeDefined().
 *
 * @example
 * expectToBeDefined(after[tag], `tag ${tag} disappeared`);
 */
export function expectToBeDefined(actual: unknown, message?: string): void {
  if (actual === undefined) expect(actual, message).toBeDefined();
}

/**
 * expect(actual, message).toBeUndefined().
 *
 * @example
 * expectToBeUndefined(({} as Record<string, unknown>).polluted, 'Object.prototype is not polluted');
 */
export function expectToBeUndefined(actual: unknown, message?: string): void {
  if (actual !== undefined) expect(actual, message).toBeUndefined();
}
