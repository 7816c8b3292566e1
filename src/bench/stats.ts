// Percentiles and summaries for benchmark reports.

import type { LatencyQuantiles } from "./results.js";

/** Nearest-rank percentile of an unsorted sample; NaN for an empty one. */
export function percentile(values: readonly number[], p: number): number {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return Number.NaN;
  const rank = Math.min(v.length - 1, Math.max(0, Math.ceil((p / 100) * v.length) - 1));
  return v[rank]!;
}

export interface Quantiles {
  p50: number;
  p90: number;
  p95: number;
  p99: number;
}

export function quantiles(values: readonly number[]): Quantiles {
  return {
    p50: percentile(values, 50),
    p90: percentile(values, 90),
    p95: percentile(values, 95),
    p99: percentile(values, 99),
  };
}

/** P50/P90/P95/P99 of the finite values, rounded to 0.1 ms; nulls for none. */
export function latencyQuantiles(values: readonly number[]): LatencyQuantiles {
  const v = values.filter((x) => Number.isFinite(x));
  if (v.length === 0) return { p50: null, p90: null, p95: null, p99: null };
  return {
    p50: round(percentile(v, 50)),
    p90: round(percentile(v, 90)),
    p95: round(percentile(v, 95)),
    p99: round(percentile(v, 99)),
  };
}

export function round(x: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** Exponential inter-arrival gaps (ms) for a Poisson process of `ratePerSec`, from a [0,1) source. */
export function poissonGapMs(ratePerSec: number, random: () => number): number {
  return (-Math.log(1 - random()) / ratePerSec) * 1000;
}
