// One tenant's burst against the others (issue 13, noisy-neighbor): the TTFT P99 of every other
// tenant's requests that arrived during the burst phase, against theirs in the other phases.

import { arrivalPhase, groupResult } from "./breakdowns.js";
import type { ReplayRecord } from "./replay.js";
import type { BurstIsolationResult } from "./results.js";
import type { BurstSpec, ScenarioPhase } from "./scenarios/shipped.js";
import { round } from "./stats.js";

/** Null when the scenario has no such phase. */
export function burstIsolation(
  records: readonly ReplayRecord[],
  phases: readonly ScenarioPhase[],
  burst: BurstSpec,
): BurstIsolationResult | null {
  if (!phases.some((p) => p.name === burst.phase)) return null;
  const quiet = records.filter((r) => r.req.tenant !== burst.tenant);
  const during = quiet.filter((r) => arrivalPhase(phases, r).name === burst.phase);
  const without = quiet.filter((r) => arrivalPhase(phases, r).name !== burst.phase);
  const quietDuring = groupResult(during);
  const quietWithout = groupResult(without);
  const a = quietDuring.ttft_ms.p99;
  const b = quietWithout.ttft_ms.p99;
  return {
    burst_tenant: burst.tenant,
    burst_phase: burst.phase,
    quiet_during: quietDuring,
    quiet_without: quietWithout,
    p99_ratio: a !== null && b !== null && b > 0 ? round(a / b, 3) : null,
  };
}
