// Spillover of only the excess: while the home region is short of headroom for a model, a share of its
// requests — growing with the shortfall, capped — goes to the next choice; the rest stays home. The share
// is counted out deterministically, so a test or the benchmark can count it.

import type { SpilloverSettings } from "./director-types.js";

/** Float slack so that, e.g., ten steps of 0.1 count as one whole request. */
const EPSILON = 1e-9;

/**
 * The share of home's requests to move: min(maxShare, (minHeadroom − headroom) / minHeadroom) while
 * headroom < minHeadroom, else 0.
 * @example spillShare(0.05, { minHeadroom: 0.15, maxShare: 0.5 }) // 0.666… capped to 0.5
 */
export function spillShare(headroom: number, s: SpilloverSettings): number {
  if (s.minHeadroom <= 0 || headroom >= s.minHeadroom) return 0;
  return Math.min(s.maxShare, (s.minHeadroom - Math.max(0, headroom)) / s.minHeadroom);
}

/**
 * One request's step of the accumulator: acc += share; when it reaches 1 this request spills and
 * acc −= 1. Over n requests at a steady share, floor(n × share) (±1) spill, evenly spaced. A share of 0
 * resets it, so that a past shortage does not spill a request once headroom is back.
 */
export function spillStep(acc: number, share: number): { spill: boolean; acc: number } {
  if (share <= 0) return { spill: false, acc: 0 };
  const next = acc + share;
  return next >= 1 - EPSILON ? { spill: true, acc: next - 1 } : { spill: false, acc: next };
}
