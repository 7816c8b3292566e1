// The picker's estimate of how long a request would wait on an endpoint before its first token: queue
// wait plus prefill of the part of the prompt the endpoint probably does not have cached.

import type { CostModel, PickerEndpoint, Signals } from "./types.js";

export const DEFAULT_COST_MODEL: CostModel = {
  prefillMsPerToken: 0.1,
  waitingRequestMs: 100,
  tokensPerBlock: 16,
};

/**
 * Requests queued ahead. With fresh metrics, the scraped queue, but never less than what the gateway
 * itself has in flight beyond the engine's running batch: a burst sent since the last scrape must count,
 * or every request of it sees the same queue and herds onto one pod. Without fresh metrics, the
 * gateway's own in-flight count is all there is.
 */
export function queuedAhead(e: PickerEndpoint, signals: Signals): number {
  if (signals === "predicted") return e.inflightRequests;
  return Math.max(e.waiting ?? 0, e.inflightRequests - (e.running ?? 0));
}

/** Prompt tokens `e` probably lacks, given how many leading blocks of the prompt it holds. */
export function uncachedTokens(matchedBlocks: number, inputTokens: number, cost: CostModel): number {
  return Math.max(0, inputTokens - matchedBlocks * cost.tokensPerBlock);
}

/**
 * Predicted time to first token on `e`, in ms, given how many leading prompt blocks it holds: the
 * endpoint's own prediction from its prefill view when it makes one, else queue × waitingRequestMs
 * plus the uncached prefill.
 */
export function predictedDelayMs(
  e: PickerEndpoint,
  matchedBlocks: number,
  inputTokens: number,
  signals: Signals,
  cost: CostModel,
  now: number,
): number {
  const uncached = uncachedTokens(matchedBlocks, inputTokens, cost);
  if (e.predictTtftMs !== undefined) return e.predictTtftMs(uncached, now);
  return queuedAhead(e, signals) * cost.waitingRequestMs + uncached * cost.prefillMsPerToken;
}

/** Where a scorer writes its n values: the cycle's reused buffer, or a new array outside a cycle. */
export function scoreBuffer(out: Float64Array | undefined, n: number): Float64Array | number[] {
  return out ?? new Array<number>(n);
}

/**
 * (max − v)/(max − min) for the first n values: the lowest scores 1, the highest 0; all equal → all 1.
 * Written into `out` (which may be `values` itself).
 */
export function invertedMinMax<T extends Float64Array | number[]>(
  values: ArrayLike<number>,
  n: number,
  out: T,
): T {
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < n; i++) {
    const v = values[i]!;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  const span = max - min;
  for (let i = 0; i < n; i++) out[i] = span > 0 ? (max - values[i]!) / span : 1;
  return out;
}

/** v clamped to [0,1]; NaN (a scorer dividing by zero) counts as 0 rather than poisoning the total. */
export function clamp01(v: number): number {
  return Number.isNaN(v) ? 0 : Math.min(1, Math.max(0, v));
}
