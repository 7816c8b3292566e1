// A made-up noisy-neighbor run for the report's tests: three routers on one pool, four tenants (one of
// them bursting in the middle phase), input sizes in three buckets, and tokengate's prediction error.

import type {
  BenchResults,
  Breakdown,
  BurstIsolationResult,
  GroupResult,
  PredictionErrorResult,
  RouterResult,
} from "../bench/results.js";

/** A group whose TTFT P50 is `p50`, P90 twice it and P99 `p99` (P95 halfway), E2E 5× the TTFT. */
function group(count: number, errors: number, p50: number, p99: number): GroupResult {
  const p90 = 2 * p50;
  return {
    count,
    errors,
    ttft_ms: { p50, p90, p95: (p90 + p99) / 2, p99 },
    e2e_ms: { p50: 5 * p50, p90: 5 * p90, p95: 5 * p99, p99: 6 * p99 },
  };
}

/** Per router: [all requests P50, P99], short prompts' P99, quiet tenants' P99 during / without. */
interface Shape {
  all: [number, number];
  shortP99: number;
  quiet: [number, number];
}

function breakdown(s: Shape, scale: number): Breakdown {
  return {
    by_tenant: {
      "quiet-1": group(100 * scale, 0, s.all[0], s.quiet[1]),
      "quiet-2": group(100 * scale, 0, s.all[0], s.quiet[1]),
      noisy: group(40 * scale, 1, 4 * s.all[0], s.all[1]),
    },
    by_input_size: {
      "<1024": group(170 * scale, 0, s.all[0], s.shortP99),
      "1024-4095": group(30 * scale, 0, 2 * s.all[0], s.quiet[1]),
      "4096-8191": group(40 * scale, 1, 4 * s.all[0], s.all[1]),
    },
  };
}

function router(s: Shape, prediction?: PredictionErrorResult): RouterResult {
  const isolation: BurstIsolationResult = {
    burst_tenant: "noisy",
    burst_phase: "burst",
    quiet_during: group(60, 0, s.all[0], s.quiet[0]),
    quiet_without: group(140, 0, s.all[0], s.quiet[1]),
    p99_ratio: Math.round((s.quiet[0] / s.quiet[1]) * 1000) / 1000,
    quiet_before: group(80, 0, s.all[0], s.quiet[1] / 2),
    p99_ratio_before: Math.round((s.quiet[0] / (s.quiet[1] / 2)) * 1000) / 1000,
  };
  return {
    status: "ok",
    topology: "4-replicas",
    classes: {
      interactive: {
        ...group(240, 1, ...s.all),
        runtime_queue_ms: group(0, 0, 1, 2).ttft_ms,
        completion_rate: 0.996,
        output_tokens: 36_000,
      },
    },
    prefix_cache_hit_rate: 0,
    throughput_rps: 20,
    output_tokens_per_s: 3000,
    errors: 1,
    endpoint_load_max_over_mean: 1.05,
    endpoints: [],
    overall: group(240, 1, ...s.all),
    ...breakdown(s, 1),
    by_phase: { before: breakdown(s, 0.4), burst: breakdown(s, 0.2), after: breakdown(s, 0.4) },
    burst_isolation: isolation,
    ...(prediction ? { prediction_error: prediction } : {}),
    queue_depth: {},
    kv_usage: {},
    duration_s: 120,
  };
}

export const SYNTHETIC_PREDICTION: PredictionErrorResult = {
  count: 2398,
  relative_pct: { p50: 18.4, p90: 61.2 },
  absolute_ms: { p50: 12.5, p90: 240 },
  after_queue: { relative_pct: { p50: 15.1, p90: 48.9 }, absolute_ms: { p50: 10, p90: 180 } },
};

/**
 * tokengate meets the P90 target (0.5×), misses P99 (0.8×), meets short prompts' (0.4×) and the burst
 * target (1.5×); least-request's quiet tenants suffer 4× in the burst.
 */
export function syntheticNoisyNeighbor(): BenchResults {
  return {
    scenario: "noisy-neighbor",
    seed: 1,
    date: "2026-07-01T09:00:00Z",
    quick: true,
    description: "Four quiet tenants' short live summaries and one tenant's burst of long prompts",
    requests: 240,
    live_class: "interactive",
    prefill_targets: true,
    routers: {
      tokengate: router({ all: [100, 1600], shortP99: 400, quiet: [600, 400] }, SYNTHETIC_PREDICTION),
      "least-request": router({ all: [200, 2000], shortP99: 1000, quiet: [1600, 400] }),
      "round-robin": router({ all: [220, 2600], shortP99: 1400, quiet: [2400, 500] }),
    },
  };
}
