/**
 * A map from a key to one or several values that keeps a single value as itself and only makes an
 * array for a second: most tasks have one subscriber and one waiting stream, and a Set for each
 * would cost memory per held stream (bench/PROFILE.md). Values must not be arrays themselves.
 */
export type MultiMap<K, V extends object> = Map<K, V | V[]>;

export function multiMapAdd<K, V extends object>(map: MultiMap<K, V>, key: K, value: V): void {
  const current = map.get(key);
  if (current === undefined) map.set(key, value);
  else if (Array.isArray(current)) current.push(value);
  else map.set(key, [current, value]);
}

/** Removes one occurrence of `value` under `key`; whether it was there. */
export function multiMapDelete<K, V extends object>(map: MultiMap<K, V>, key: K, value: V): boolean {
  const current = map.get(key);
  if (current === undefined) return false;
  if (!Array.isArray(current)) {
    if (current !== value) return false;
    map.delete(key);
    return true;
  }
  const index = current.indexOf(value);
  if (index === -1) return false;
  current.splice(index, 1);
  if (current.length === 1) map.set(key, current[0] as V);
  else if (current.length === 0) map.delete(key);
  return true;
}

/** The values under `key`, as a new array (safe to iterate while values are added or removed). */
export function multiMapValues<K, V extends object>(map: MultiMap<K, V>, key: K): V[] {
  const current = map.get(key);
  if (current === undefined) return [];
  return Array.isArray(current) ? [...current] : [current];
}

/** Whether `value` is (still) under `key`. */
export function multiMapHas<K, V extends object>(map: MultiMap<K, V>, key: K, value: V): boolean {
  const current = map.get(key);
  return current === value || (Array.isArray(current) && current.includes(value));
}
