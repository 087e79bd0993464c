/**
 * A value computed on first use instead of at import, then kept: for constants that cost
 * something to build (JSON Schemas generated from zod) and that many importers never read,
 * e.g. a command that runs no model. `make` must be pure, so when it runs does not matter.
 *
 * @example
 * export const managerToolSpecs = computedOnce(() => managerTools.map(toSpec));
 * managerToolSpecs(); // built now, the same array on every later call
 */
export function computedOnce<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => (made ??= { value: make() }).value;
}
