// The director's Prometheus metrics (ai_director_*): decisions and refusals as they happen, forward
// failures, and each region's breaker, summary age and headroom read from the core at scrape time.
// Labels stay low-cardinality: region, reason, code, model (the aliases regions publish).

import { type Counter, type Gauge, MetricsRegistry } from "../telemetry/metrics.js";
import type { DirectorCore, RegionState } from "./director-types.js";

const BREAKER_VALUE: Record<RegionState["breaker"], number> = { closed: 0, open: 1, "half-open": 2 };

export class DirectorMetrics {
  readonly registry = new MetricsRegistry();
  readonly decisions: Counter;
  readonly refusals: Counter;
  readonly forwardFailures: Counter;
  readonly pollFailures: Counter;
  readonly breakerState: Gauge;
  readonly summaryAge: Gauge;
  readonly headroom: Gauge;
  /** The models each region's headroom series were last set for: one a summary drops is removed. */
  private readonly published = new Map<string, Set<string>>();

  constructor(core: DirectorCore, clock: () => number = Date.now) {
    const r = this.registry;
    this.decisions = r.counter(
      "ai_director_decisions_total",
      "Requests sent (or answered) to a region, by region and reason.",
      ["region", "reason"],
    );
    this.refusals = r.counter("ai_director_refusals_total", "Requests no region could take, by code.", [
      "code",
    ]);
    this.forwardFailures = r.counter(
      "ai_director_forward_failures_total",
      "Forwarded requests that failed for the region's fault (connect, 5xx, a stream cut), by region.",
      ["region"],
    );
    this.pollFailures = r.counter(
      "ai_director_poll_failures_total",
      "Summary polls that failed (timeout, refused, bad answer), by region.",
      ["region"],
    );
    this.breakerState = r.gauge(
      "ai_director_breaker_state",
      "Each region's breaker: 0 closed, 1 open, 2 half-open.",
      ["region"],
    );
    this.summaryAge = r.gauge(
      "ai_director_summary_age_seconds",
      "Age of each region's last summary (NaN before the first).",
      ["region"],
    );
    this.headroom = r.gauge(
      "ai_director_region_headroom",
      "Each region's headroom for a model, 0..1, as its last summary said.",
      ["region", "model"],
    );
    r.onCollect(() => this.collect(core.regions(clock())));
  }

  private collect(states: readonly RegionState[]): void {
    for (const s of states) {
      this.breakerState.labels(s.region).set(BREAKER_VALUE[s.breaker]);
      this.summaryAge.labels(s.region).set(s.summaryAgeMs === null ? Number.NaN : s.summaryAgeMs / 1000);
      const now = new Set<string>();
      for (const [model, h] of Object.entries(s.summary?.headroomByModel ?? {})) {
        this.headroom.labels(s.region, model).set(h);
        now.add(model);
      }
      for (const model of this.published.get(s.region) ?? [])
        if (!now.has(model)) this.headroom.remove(s.region, model);
      this.published.set(s.region, now);
    }
  }
}
