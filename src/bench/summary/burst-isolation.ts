// One tenant's burst against the others (issue 13, noisy-neighbor): the TTFT P99 of every other
// tenant's requests that arrived during the burst phase, against theirs in the other phases, and
// against theirs before the burst alone (the phases after it also hold the backlog's drain).

import type { BurstIsolationResult, GroupResult } from "../results.js";
import type { BurstSpec, ScenarioPhase } from "../scenarios/shipped.js";
import { round } from "../stats.js";
import type { ReplayRecord } from "../traffic/replay.js";
import { arrivalPhase, groupResult } from "./breakdowns.js";

/** Null when the scenario has no such phase. */
export function burstIsolation(
  records: readonly ReplayRecord[],
  phases: readonly ScenarioPhase[],
  burst: BurstSpec,
): BurstIsolationResult | null {
  const at = phases.findIndex((p) => p.name === burst.phase);
  if (at < 0) return null;
  const earlier = new Set(phases.slice(0, at).map((p) => p.name));
  const quiet = records.filter((r) => r.req.tenant !== burst.tenant);
  const phaseOf = (r: ReplayRecord) => arrivalPhase(phases, r).name;
  const quietDuring = groupResult(quiet.filter((r) => phaseOf(r) === burst.phase));
  const quietWithout = groupResult(quiet.filter((r) => phaseOf(r) !== burst.phase));
  const quietBefore = groupResult(quiet.filter((r) => earlier.has(phaseOf(r))));
  return {
    burst_tenant: burst.tenant,
    burst_phase: burst.phase,
    quiet_during: quietDuring,
    quiet_without: quietWithout,
    p99_ratio: p99Ratio(quietDuring, quietWithout),
    quiet_before: quietBefore,
    p99_ratio_before: p99Ratio(quietDuring, quietBefore),
  };
}

function p99Ratio(a: GroupResult, b: GroupResult): number | null {
  const x = a.ttft_ms.p99;
  const y = b.ttft_ms.p99;
  return x !== null && y !== null && y > 0 ? round(x / y, 3) : null;
}
