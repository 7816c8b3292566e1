// A made-up but plausible BenchResults for the report's tests: seed 004's day under two routers (one
// slow), three request classes, a skipped nginx baseline, and engine gauges over time.

import {
  type BenchResults,
  type ClassResult,
  type EndpointLoad,
  type RouterResult,
  skippedRouter,
  type TimePoint,
} from "../bench/results.js";
import { seededRandom } from "../sim/rng.js";

const rng = seededRandom;

function logNormal(random: () => number, median: number, sigma: number): number {
  const z = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  return median * Math.exp(sigma * z);
}

function quantiles(p50: number, p90: number, p95: number, p99: number) {
  return { p50, p90, p95, p99 };
}

function cls(count: number, errors: number, ttftP50: number, e2eP50: number): ClassResult {
  return {
    count,
    errors,
    ttft_ms: quantiles(ttftP50, ttftP50 * 2.5, ttftP50 * 3.2, ttftP50 * 6),
    e2e_ms: quantiles(e2eP50, e2eP50 * 1.8, e2eP50 * 2.1, e2eP50 * 3.5),
    runtime_queue_ms: quantiles(ttftP50 / 3, ttftP50, ttftP50 * 1.4, ttftP50 * 3),
    completion_rate: (count - errors) / count,
    output_tokens: count * 400,
  };
}

/** Class name → [requests, failures, TTFT median ms]. */
type Mix = Record<string, [number, number, number]>;

function samples(seed: number, mix: Mix, durationS: number): NonNullable<RouterResult["samples"]> {
  const random = rng(seed);
  const out: NonNullable<RouterResult["samples"]> = [];
  for (const [name, [count, failures, median]] of Object.entries(mix)) {
    for (let i = 0; i < count; i++) {
      const ok = i >= failures;
      const ttft = logNormal(random, median, 0.9);
      out.push({ cls: name, ttft_ms: ok ? ttft : null, e2e_ms: ttft * 4, ok, t_s: random() * durationS });
    }
  }
  return out;
}

/** A gauge wandering around `level`, with a burst in the middle third for the busy endpoints. */
function gauge(
  seed: number,
  points: number,
  durationS: number,
  level: number,
  burst: number,
  cap = Infinity,
) {
  const random = rng(seed);
  const out: TimePoint[] = [];
  for (let i = 0; i < points; i++) {
    const t = (i * durationS) / points;
    const inBurst = t > durationS / 3 && t < (2 * durationS) / 3;
    const v = Math.max(0, level + (inBurst ? burst : 0) + (random() - 0.5) * level);
    out.push({ t_s: Math.round(t * 100) / 100, value: Math.min(cap, Math.round(v * 100) / 100) });
  }
  return out;
}

function endpoints(names: [string, string, number][]): EndpointLoad[] {
  return names.map(([endpoint, group, requests]) => ({
    endpoint,
    group,
    requests,
    prompt_tokens: requests * 9000,
    generation_tokens: requests * 600,
  }));
}

/**
 * Seed 004's incident under tokengate (split pools) and least-request (4 pods), round-robin skipped.
 * `scale` multiplies the per-request samples and gauge points, to test that chart files stay bounded.
 */
export function syntheticResults(scale = 1): BenchResults {
  const duration = 120;
  const pts = 480 * scale;
  const tgMix: Mix = {
    interactive: [250 * scale, 0, 420],
    long: [60 * scale, 1, 2600],
    batch: [90 * scale, 3, 9000],
  };
  const lrMix: Mix = {
    interactive: [250 * scale, 2, 2100],
    long: [60 * scale, 4, 5200],
    batch: [90 * scale, 9, 14000],
  };
  const tokengate: RouterResult = {
    status: "ok",
    topology: "split-pools",
    classes: {
      interactive: cls(250, 0, 420, 2400),
      long: cls(60, 1, 2600, 21000),
      batch: cls(90, 3, 9000, 64000),
    },
    acceptance: {
      live_ttft_p95_ms: 742,
      live_e2e_p95_ms: 5230,
      runtime_queue_p95_ms: 210,
      long_context_completion_rate: 0.9934,
      route_log_completeness: 0.998,
      unknown_task_ratio: 0.004,
    },
    prefix_cache_hit_rate: 0.412,
    throughput_rps: 3.33,
    output_tokens_per_s: 1432.6,
    errors: 4,
    endpoint_load_max_over_mean: 1.62,
    endpoints: endpoints([
      ["online-0", "summary-online", 84],
      ["online-1", "summary-online", 83],
      ["online-2", "summary-online", 83],
      ["long-0", "summary-long", 76],
      ["long-1", "summary-long", 74],
    ]),
    queue_depth: {
      "online-0": gauge(1, pts, duration, 0.6, 1),
      "online-1": gauge(2, pts, duration, 0.6, 1),
      "online-2": gauge(3, pts, duration, 0.6, 1),
      "long-0": gauge(4, pts, duration, 2, 6),
      "long-1": gauge(5, pts, duration, 2, 5),
    },
    kv_usage: {
      "online-0": gauge(6, pts, duration, 0.25, 0.1, 1),
      "online-1": gauge(7, pts, duration, 0.25, 0.1, 1),
      "online-2": gauge(8, pts, duration, 0.25, 0.1, 1),
      "long-0": gauge(9, pts, duration, 0.6, 0.3, 1),
      "long-1": gauge(10, pts, duration, 0.6, 0.3, 1),
    },
    samples: samples(11, tgMix, duration),
    duration_s: duration,
  };
  const leastRequest: RouterResult = {
    status: "ok",
    topology: "original-4-pods",
    classes: {
      interactive: cls(250, 2, 2100, 7900),
      long: cls(60, 4, 5200, 30000),
      batch: cls(90, 9, 14000, 80000),
    },
    acceptance: {
      live_ttft_p95_ms: 6412,
      live_e2e_p95_ms: 18260,
      runtime_queue_p95_ms: 4903,
      long_context_completion_rate: 0.941,
      route_log_completeness: null,
      unknown_task_ratio: null,
    },
    prefix_cache_hit_rate: null,
    throughput_rps: 3.21,
    output_tokens_per_s: 1380.2,
    errors: 15,
    endpoint_load_max_over_mean: 1.04,
    endpoints: endpoints([
      ["pod-0", "summary-default", 101],
      ["pod-1", "summary-default", 99],
      ["pod-2", "summary-default", 100],
      ["pod-3", "summary-default", 100],
    ]),
    queue_depth: {
      "pod-0": gauge(12, pts, duration, 3, 9),
      "pod-1": gauge(13, pts, duration, 2, 4),
      "pod-2": gauge(14, pts, duration, 3, 11),
      "pod-3": gauge(15, pts, duration, 1, 2),
    },
    kv_usage: {
      "pod-0": gauge(16, pts, duration, 0.7, 0.25, 1),
      "pod-1": gauge(17, pts, duration, 0.5, 0.2, 1),
      "pod-2": gauge(18, pts, duration, 0.7, 0.3, 1),
      "pod-3": gauge(19, pts, duration, 0.4, 0.1, 1),
    },
    samples: samples(20, lrMix, duration),
    duration_s: duration,
  };
  return {
    scenario: "support-incident",
    seed: 4,
    date: "2026-06-15T10:16:23Z",
    quick: true,
    description:
      "Seed 004's day: live summaries at a steady rate while a backlog of batch recomputes floods in.",
    requests: 400,
    routers: {
      tokengate: tokengate,
      "least-request": leastRequest,
      "round-robin": skippedRouter("nginx not found on PATH", "original-4-pods"),
    },
  };
}
