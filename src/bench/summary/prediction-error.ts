// How good the gateway's TTFT prediction is (issue 13): every request line on which it picked an
// endpoint carries `predicted_ttft_ms` (its prediction at decision time) beside `ttft_ms` (what
// followed). A bad model shows here as a large error, whichever router's figures look good.

import type { PredictionErrorResult } from "../results.js";
import { percentile, round } from "../stats.js";

type Pair = { predicted: number; actual: number };

const finite = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);

function errors(pairs: readonly Pair[]) {
  if (pairs.length === 0) {
    return { relative_pct: { p50: null, p90: null }, absolute_ms: { p50: null, p90: null } };
  }
  const abs = pairs.map((p) => Math.abs(p.predicted - p.actual));
  const rel = pairs.map((p) => (Math.abs(p.predicted - p.actual) / p.actual) * 100);
  return {
    relative_pct: { p50: round(percentile(rel, 50)), p90: round(percentile(rel, 90)) },
    absolute_ms: { p50: round(percentile(abs, 50)), p90: round(percentile(abs, 90)) },
  };
}

/**
 * Prediction error over the request lines of a gateway log (`inference.*` events) with both a
 * `predicted_ttft_ms` and a positive `ttft_ms`, streams only (`stream: false` lines are left out). A log without predictions gives a count of 0 and nulls.
 * @example predictionError(readLog("gateway.log")).relative_pct.p50 // 12.5 (%)
 */
export function predictionError(log: readonly Record<string, unknown>[]): PredictionErrorResult {
  const total: Pair[] = [];
  const afterQueue: Pair[] = [];
  for (const l of log) {
    if (!String(l.event).startsWith("inference.")) continue;
    // A response not streamed logs its whole latency as `ttft_ms`: no first token to predict.
    if (l.stream === false) continue;
    const predicted = l.predicted_ttft_ms;
    const actual = l.ttft_ms;
    if (!finite(predicted) || !finite(actual) || actual <= 0) continue;
    total.push({ predicted, actual });
    // The prediction counts from arrival, the queue's wait known by then; without it, both from there.
    const queued = finite(l.gateway_queue_ms) ? l.gateway_queue_ms : 0;
    const rest = actual - queued;
    if (rest > 0) afterQueue.push({ predicted: Math.max(0, predicted - queued), actual: rest });
  }
  return { count: total.length, ...errors(total), after_queue: errors(afterQueue) };
}
