// An attempt starts: written on the request's record, then the pipeline's attempt hooks begin it. Both
// front doors start every attempt here, and end it with the RunningAttempt's `end`.

import type { Placement } from "../flow/placement.js";
import type { RequestPlan } from "../plan/request-plan.js";
import type { RunningAttempt } from "./hooks.js";
import type { PoolRuntime } from "./pool-runtime.js";
import type { RequestRecord } from "./request-record.js";
import type { GatewayRuntime } from "./runtime.js";

export function startAttempt(
  gw: GatewayRuntime,
  pool: PoolRuntime,
  plan: RequestPlan,
  rec: RequestRecord,
  placement: Placement,
): RunningAttempt {
  recordAttempt(rec, plan.decision.modelVersion, placement);
  return gw.hooks.begin(pool, plan, rec, placement.endpoint, placement.lease);
}

/**
 * An attempt starts on its placement: counted on the request's record, with the endpoint, the version it
 * runs, its KV cache use, and the picker's choice (mode, reason, top scores, predicted TTFT).
 */
function recordAttempt(rec: RequestRecord, planVersion: string, placement: Placement): void {
  const { pick, endpoint } = placement;
  rec.attempts++;
  rec.endpoint = endpoint.name;
  rec.modelVersion = endpoint.modelVersion ?? planVersion;
  rec.kvCacheUsedRatio = endpoint.kvUsage;
  rec.pickMode = pick.mode;
  rec.pickReason = pick.reason;
  rec.pickScores = pick.topScores.map((t) => `${t.endpoint}=${t.total.toFixed(3)}`).join(" ");
  // The estimate of the TTFT the log records (`ttft_ms`, from arrival): the time the request has spent
  // already, in the gateway queue and before, plus the step law's estimate from dispatch; the picker's
  // ranking value where the endpoint keeps no prefill view.
  const estimate = placement.lease.prefill?.estimatedMs;
  rec.predictedTtftMs = estimate === undefined ? pick.predictedTtftMs : rec.elapsedMs() + estimate;
  if (pick.mode !== "metrics") rec.addFallback(`pick:${pick.mode}`);
}
