// When an endpoint has room for one more request: the saturation bounds flow control dispatches by.
// Engines keep short queues; the gateway keeps the long one, where order can still change.

import type { EndpointState } from "../endpoints/endpoint-state.js";

/** Per-pool bounds; `InferencePool.spec.flowControl` sets them. */
export interface SaturationBounds {
  /**
   * Engine waiting queue at which the endpoint is full: the scraped `num_requests_waiting`, plus the
   * requests the gateway sent it since that scrape (net of those that finished), since a scrape is old news.
   */
  readonly maxWaiting: number;
  /** KV-cache use (0..1) at which the endpoint is full. */
  readonly maxKvCacheUsage: number;
  /**
   * With stale or missing metrics the endpoint counts as saturated, except that the gateway's own
   * in-flight count may still let it take work below this many requests (the fallback signal).
   */
  readonly staleMaxInflight: number;
  /** Optional hard bound on the gateway's in-flight requests per endpoint; null: none. */
  readonly maxInflight: number | null;
  /** Optional bound on in-flight tokens (input + max output) per endpoint; null: none. */
  readonly maxInflightTokens: number | null;
}

export const DEFAULT_SATURATION: SaturationBounds = {
  maxWaiting: 4,
  maxKvCacheUsage: 0.9,
  staleMaxInflight: 4,
  maxInflight: null,
  maxInflightTokens: null,
};

/**
 * Why `ep` cannot take another request of `cost` tokens now, or null when it has room. An endpoint with
 * nothing in flight always has room for one request (a single oversized request must not wait forever).
 * @example saturationOf(ep, DEFAULT_SATURATION, 3000, Date.now()) // "waiting 4 ≥ 4" or null
 */
export function saturationOf(
  ep: EndpointState,
  b: SaturationBounds,
  cost: number,
  now: number,
): string | null {
  if (!ep.routable(now)) return "not routable";
  const inflight = ep.inflightRequests;
  if (b.maxInflight !== null && inflight >= b.maxInflight) return `in flight ${inflight} ≥ ${b.maxInflight}`;
  if (inflight === 0) return null;
  if (b.maxInflightTokens !== null && ep.inflightTokens + cost > b.maxInflightTokens) {
    return `in-flight tokens ${ep.inflightTokens} + ${cost} > ${b.maxInflightTokens}`;
  }
  if (!ep.metricsFresh(now)) {
    return inflight >= b.staleMaxInflight
      ? `metrics stale, in flight ${inflight} ≥ ${b.staleMaxInflight}`
      : null;
  }
  const waiting = (ep.waiting ?? 0) + Math.max(0, inflight - ep.inflightAtScrape);
  if (waiting >= b.maxWaiting) return `waiting ${waiting} ≥ ${b.maxWaiting}`;
  if (ep.kvUsage !== null && ep.kvUsage >= b.maxKvCacheUsage) {
    return `KV ${(ep.kvUsage * 100).toFixed(0)}% ≥ ${(b.maxKvCacheUsage * 100).toFixed(0)}%`;
  }
  return null;
}
