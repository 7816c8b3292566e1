// Bounding the points per line so chart files stay small however long the run, without hiding the
// shape a reader looks for: the tail of a latency CDF, the spikes of a queue.

export type Point = [x: number, y: number];

/** Most vertices any one drawn line gets. */
export const MAX_POINTS_PER_LINE = 600;

/**
 * Empirical CDF of `values` as [value, share ≤ value] points, ascending, at most `maxPoints` of them.
 * Past that it keeps evenly spaced ranks, always including the first and the last (the tail).
 */
export function cdfPoints(values: readonly number[], maxPoints: number): Point[] {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  const n = v.length;
  if (n === 0) return [];
  const count = Math.min(n, Math.max(2, maxPoints));
  const out: Point[] = [];
  for (let k = 0; k < count; k++) {
    const i = count === 1 ? 0 : Math.round((k * (n - 1)) / (count - 1));
    out.push([v[i]!, (i + 1) / n]);
  }
  return out;
}

/**
 * At most `maxPoints` of a time series sorted by x: per bucket, its lowest and highest point in time
 * order, so a one-sample spike survives where averaging would flatten it.
 */
export function minMaxDownsample(points: readonly Point[], maxPoints: number): Point[] {
  if (points.length <= maxPoints) return [...points];
  const buckets = Math.max(1, Math.floor(maxPoints / 2));
  const size = points.length / buckets;
  const out: Point[] = [];
  for (let b = 0; b < buckets; b++) {
    const slice = points.slice(Math.floor(b * size), Math.floor((b + 1) * size));
    if (slice.length === 0) continue;
    let lo = slice[0]!;
    let hi = slice[0]!;
    for (const p of slice) {
      if (p[1] < lo[1]) lo = p;
      if (p[1] > hi[1]) hi = p;
    }
    if (lo === hi) out.push(lo);
    else out.push(...(lo[0] <= hi[0] ? [lo, hi] : [hi, lo]));
  }
  return out;
}
