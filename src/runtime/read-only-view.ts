/**
 * A read-only view of a Map: it sees every change of the map, and offers no way to make one
 * (a cast to Map finds no `set`). For registries a module keeps and others may only read.
 */
export function readOnlyView<K, V>(map: Map<K, V>): ReadonlyMap<K, V> {
  const view: ReadonlyMap<K, V> = {
    get: (key) => map.get(key),
    has: (key) => map.has(key),
    get size() {
      return map.size;
    },
    forEach: (callback, thisArg?: unknown) => map.forEach((value, key) => callback.call(thisArg, value, key, view)),
    entries: () => map.entries(),
    keys: () => map.keys(),
    values: () => map.values(),
    [Symbol.iterator]: () => map[Symbol.iterator](),
  };
  return view;
}
