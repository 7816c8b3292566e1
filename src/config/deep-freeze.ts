// Validated config is frozen: past the loader nothing may change it in place.

/** Freezes plain objects and arrays recursively; Maps and Sets are only typed read-only. */
export function deepFreeze<T>(value: T): T {
  if (value instanceof Map) {
    for (const v of value.values()) deepFreeze(v);
  } else if (value instanceof Set) {
    for (const v of value) deepFreeze(v);
  } else if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
