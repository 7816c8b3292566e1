// The order request classes appear in, in tables and legends: seed 004's classes first, then the rest.

const SEED_004_CLASSES = ["interactive", "long", "batch"];

export function orderClasses(names: Iterable<string>): string[] {
  const set = new Set(names);
  const known = SEED_004_CLASSES.filter((c) => set.has(c));
  const others = [...set].filter((c) => !SEED_004_CLASSES.includes(c)).sort();
  return [...known, ...others];
}
