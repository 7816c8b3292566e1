// The soak benchmark's figures and their judgement (the Markdown is in soak-report.ts): memory at the end of the warm-up and at the end of
// the load (medians of the samples in a window, so one sample taken mid-GC does not decide), RSS growth,
// event-loop delay, fds, what was left counted after the load stopped, and the failures by class — and
// the targets (RSS growth under 10% after warm-up, nothing left in flight or queued, no request failed
// while healthy capacity remained) met or not.

import { percentile, round } from "../stats.js";
import type { FailureGroup } from "./soak-classify.js";
import type { GatewaySample, RoutableChange } from "./soak-watch.js";

export interface MemoryPoint {
  /** Seconds from the start of the load: the window [from_s, to_s]. */
  from_s: number;
  to_s: number;
  samples: number;
  rss_mib: number | null;
  heap_used_mib: number | null;
  fds: number | null;
  /** The probe's reading right after a forced full GC at the window's end (null without one). */
  rss_after_gc_mib: number | null;
  heap_after_gc_mib: number | null;
}

const median = (xs: readonly (number | null)[]) => {
  const v = xs.filter((x): x is number => x !== null && Number.isFinite(x));
  return v.length === 0 ? null : percentile(v, 50);
};

/** Medians of the samples whose time lies in [fromS, toS]. */
export function memoryAt(samples: readonly GatewaySample[], fromS: number, toS: number): MemoryPoint {
  const inWindow = samples.filter((s) => s.t_s >= fromS && s.t_s <= toS);
  return {
    from_s: round(fromS, 1),
    to_s: round(toS, 1),
    samples: inWindow.length,
    rss_mib: median(inWindow.map((s) => s.rss_mib)),
    heap_used_mib: median(inWindow.map((s) => s.heap_used_mib ?? s.metric_heap_used_mib)),
    fds: median(inWindow.map((s) => s.fds)),
    rss_after_gc_mib: null,
    heap_after_gc_mib: null,
  };
}

/** (b − a) / a in percent, one decimal; null when either is missing. */
export function growthPercent(a: number | null, b: number | null): number | null {
  if (a === null || b === null || !(a > 0)) return null;
  return round(((b - a) / a) * 100, 1);
}

/** Least-squares slope of RSS over the samples in [fromS, toS], MiB per hour; null with < 3 samples. */
export function rssSlopeMibPerHour(
  samples: readonly GatewaySample[],
  fromS: number,
  toS: number,
): number | null {
  const pts = samples.filter((s) => s.t_s >= fromS && s.t_s <= toS && s.rss_mib !== null);
  if (pts.length < 3) return null;
  const n = pts.length;
  const mx = pts.reduce((a, s) => a + s.t_s, 0) / n;
  const my = pts.reduce((a, s) => a + s.rss_mib!, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (const s of pts) {
    sxy += (s.t_s - mx) * (s.rss_mib! - my);
    sxx += (s.t_s - mx) ** 2;
  }
  return sxx > 0 ? round((sxy / sxx) * 3600, 1) : null;
}

export interface EndState {
  /** How long after the last response the counters were read. */
  settle_ms: number;
  /** Sum of ai_gateway_inflight_requests (null: /metrics did not answer). */
  inflight_metric: number | null;
  /** Each endpoint's in-flight requests in GET /admin/endpoints. */
  inflight_by_endpoint: Record<string, number> | null;
  /** Sum of ai_gateway_queue_depth. */
  queued_metric: number | null;
  fds: number | null;
  /** The same fds by kind (socket, pipe, anon_inode, file). */
  fd_kinds: Record<string, number> | null;
  /** Before the load started (the engines' health and metrics connections open). */
  fds_before_load: number | null;
  /** Once idle keep-alive connections closed, after `idle_wait_s` without traffic (null: not waited). */
  fds_after_idle: number | null;
  idle_wait_s: number | null;
}

export interface GatewayLogSummary {
  requests: number;
  by_status: Record<string, number>;
  /** Requests that took more than one attempt, and how many of those succeeded. */
  retried: number;
  retried_ok: number;
  /** Failed after a retryable failure (reset, refused, 5xx) without a second attempt: the retry budget said no. */
  failed_without_retry_after_retryable: number;
  /** Log events other than request lines, by name. */
  events: Record<string, number>;
}

export interface Target {
  name: string;
  goal: string;
  measured: string;
  /** null: not measured. */
  met: boolean | null;
}

export interface TargetInputs {
  rssGrowthPercent: number | null;
  end: EndState;
  failedWhileHealthy: number;
}

export const RSS_GROWTH_TARGET_PERCENT = 10;

/** The soak's three targets, each met, not met, or not measured. */
export function soakTargets(x: TargetInputs): Target[] {
  const byEndpoint = x.end.inflight_by_endpoint;
  const endpointSum = byEndpoint === null ? null : Object.values(byEndpoint).reduce((a, b) => a + b, 0);
  const held = [x.end.inflight_metric, endpointSum, x.end.queued_metric];
  const measuredHeld = held.filter((v): v is number => v !== null);
  return [
    {
      name: "RSS growth after warm-up",
      goal: `< ${RSS_GROWTH_TARGET_PERCENT}%`,
      measured: x.rssGrowthPercent === null ? "not measured" : `${x.rssGrowthPercent}%`,
      met: x.rssGrowthPercent === null ? null : x.rssGrowthPercent < RSS_GROWTH_TARGET_PERCENT,
    },
    {
      name: "left in flight or queued after the load",
      goal: "0",
      measured:
        measuredHeld.length === 0
          ? "not measured"
          : `in flight ${x.end.inflight_metric ?? "–"} (metric), ${endpointSum ?? "–"} (/admin/endpoints); queued ${x.end.queued_metric ?? "–"}`,
      // Any count above 0 fails it; all three read and 0 meets it; otherwise it is not judged.
      met: measuredHeld.some((v) => v !== 0) ? false : measuredHeld.length === held.length ? true : null,
    },
    {
      name: "failed while healthy capacity remained",
      goal: "0",
      measured: String(x.failedWhileHealthy),
      met: x.failedWhileHealthy === 0,
    },
  ];
}

export interface CrashRecord {
  replica: number;
  endpoint: string;
  /** When the fault was posted (s from the start of the load). */
  at_s: number;
  /** Whether the sim accepted the fault. */
  posted: boolean;
  /** The engine answered its health check again. */
  engine_back_at_s: number | null;
  /** The gateway's /admin/endpoints first showed it not routable, and routable again. */
  gateway_out_at_s: number | null;
  gateway_back_at_s: number | null;
  /** The gateway's reasons while it was out, in order. */
  gateway_why: string[];
  /** Failures seen from this crash until the next one: counted against the target, and streams cut. */
  failed_while_healthy?: number;
  streams_cut?: number;
}

/** Pairs each crash with the gateway's view of that endpoint after it. */
export function crashRecovery(
  crash: { endpoint: string; atMs: number; until: number },
  changes: readonly RoutableChange[],
): Pick<CrashRecord, "gateway_out_at_s" | "gateway_back_at_s" | "gateway_why"> {
  const mine = changes.filter(
    (c) => c.endpoint === crash.endpoint && c.atMs >= crash.atMs && c.atMs < crash.until,
  );
  const out = mine.find((c) => !c.routable) ?? null;
  const back = out ? (mine.find((c) => c.routable && c.atMs > out.atMs) ?? null) : null;
  return {
    gateway_out_at_s: out ? round(out.atMs / 1000, 1) : null,
    gateway_back_at_s: back ? round(back.atMs / 1000, 1) : null,
    gateway_why: [
      ...new Set(mine.filter((c) => !c.routable && c.why).map((c) => c.why!.replace(/\d+ ms/, "… ms"))),
    ],
  };
}

/** One failure group as the report shows it, with the gateway's log line of each sample. */
export interface ReportedGroup extends Omit<FailureGroup, "samples"> {
  samples: {
    trace_id: string;
    at_s: number;
    since_crash_ms: number | null;
    down: string[];
    endpoint: string | null;
    detail: string;
    gateway_log: Record<string, unknown> | null;
  }[];
}

export interface SoakReport {
  benchmark: "soak";
  date: string;
  quick: boolean;
  minutes: number;
  machine: {
    cpus: number;
    cpu_model: string;
    node: string;
    load_average_1m_before: number;
    load_average_1m_after: number;
    load_average_1m_max_during: number;
  };
  setup: Record<string, string | number>;
  load: {
    offered_rps: number;
    achieved_rps: number;
    requests: number;
    streams: number;
    ok: number;
    cancelled_by_client: number;
    failed: number;
    dropped_at_max_outstanding: number;
    ttft_ms: { p50: number; p99: number };
    e2e_ms: { p50: number; p99: number };
  };
  engines: Record<string, { waiting_max: number; waiting_nonzero_share: number; requests: number | null }>;
  crashes: CrashRecord[];
  memory: {
    warmup: MemoryPoint;
    end: MemoryPoint;
    rss_growth_percent: number | null;
    heap_growth_percent: number | null;
    heap_after_gc_growth_percent: number | null;
    rss_slope_mib_per_hour: number | null;
    /** RSS (median) in a window halfway through the measured period, and its growth to the end. */
    rss_mid_mib: number | null;
    rss_growth_second_half_percent: number | null;
    rss_peak_mib: number | null;
  };
  loop_delay_ms: { p99_median: number | null; p99_max: number | null; max: number | null };
  fds: { warmup: number | null; end: number | null; max: number | null; after_settle: number | null };
  end_state: EndState;
  failures: {
    total: number;
    while_healthy_capacity: number;
    stream_cut_by_its_engine_crash: number;
    without_healthy_capacity: number;
    groups: ReportedGroup[];
  };
  targets: Target[];
  gateway_log: GatewayLogSummary;
  gateway_view: RoutableChange[];
  series: GatewaySample[];
}
