// The process and runtime metrics of prom-client's default set (process_*, nodejs_*), under its names
// and types, so the dashboards and alerts people keep for Node.js services read the gateway too. Every
// value is read when /metrics is scraped; the one that cannot be (GC pauses) is recorded as V8 reports
// each collection. Nothing here runs on a timer or on the request path.

import { readdirSync, readFileSync, statSync } from "node:fs";
import {
  constants,
  type NodeGCPerformanceDetail,
  type PerformanceEntry,
  PerformanceObserver,
  performance,
} from "node:perf_hooks";
import type { LoopDelayWindow } from "./loop-delay.js";
import type { Counter, Gauge, Histogram, MetricsRegistry } from "./metrics.js";

/** prom-client's buckets for nodejs_gc_duration_seconds (seconds). */
export const GC_BUCKETS: readonly number[] = [0.001, 0.01, 0.1, 1, 2, 5];

const GC_KINDS = new Map<number, string>([
  [constants.NODE_PERFORMANCE_GC_MAJOR, "major"],
  [constants.NODE_PERFORMANCE_GC_MINOR, "minor"],
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL, "incremental"],
  [constants.NODE_PERFORMANCE_GC_WEAKCB, "weakcb"],
]);

/** Node's own lists of libuv handles and requests (DEP0161, documentation-only; what prom-client reads). */
interface LegacyActive {
  _getActiveHandles?: () => unknown[];
  _getActiveRequests?: () => unknown[];
}

export interface ProcessMetricsOptions {
  /**
   * The last window of the gateway's loop-delay monitor (the one behind
   * ai_gateway_event_loop_delay_seconds): nodejs_eventloop_lag_{min,max,mean,stddev,p50,p90,p99}_seconds.
   */
  loopDelay?: () => LoopDelayWindow;
}

/** Registers the families in `registry` and sets them at each exposition; `start` begins GC timing. */
export class ProcessMetrics {
  readonly gcDuration: Histogram;
  private readonly cpuUser: Counter;
  private readonly cpuSystem: Counter;
  private readonly cpu: Counter;
  private readonly rss: Gauge;
  private readonly heapTotal: Gauge;
  private readonly heapUsed: Gauge;
  private readonly external: Gauge;
  private readonly openFds: Gauge | null;
  private readonly lag: Gauge;
  private readonly lagWindow: Record<keyof LoopDelayWindow, Gauge> | null;
  /** Set at every scrape, though they do not change, so a registry reset does not blank them. */
  private readonly constants: () => void;
  private readonly handles: Gauge | null;
  private readonly handlesTotal: Gauge | null;
  private readonly requests: Gauge | null;
  private readonly requestsTotal: Gauge | null;
  private readonly resources: Gauge;
  private readonly resourcesTotal: Gauge;
  private readonly loopDelay: (() => LoopDelayWindow) | null;
  private gcObserver: PerformanceObserver | null = null;
  /** Seconds from the previous scrape to the next turn of the loop (prom-client's nodejs_eventloop_lag_seconds). */
  private lagSeconds = 0;
  private lagProbing = false;

  constructor(registry: MetricsRegistry, opts: ProcessMetricsOptions = {}) {
    const r = registry;
    this.loopDelay = opts.loopDelay ?? null;
    this.cpuUser = r.counter("process_cpu_user_seconds_total", "Total user CPU time spent in seconds.");
    this.cpuSystem = r.counter("process_cpu_system_seconds_total", "Total system CPU time spent in seconds.");
    this.cpu = r.counter("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.");
    const startTime = r.gauge(
      "process_start_time_seconds",
      "Start time of the process since unix epoch in seconds.",
    );
    this.rss = r.gauge("process_resident_memory_bytes", "Resident memory size in bytes.");
    this.openFds = readable("/proc/self/fd")
      ? r.gauge("process_open_fds", "Number of open file descriptors.")
      : null;
    const maxFds = maxOpenFiles();
    const maxFdsGauge =
      maxFds === null ? null : r.gauge("process_max_fds", "Maximum number of open file descriptors.");
    this.heapTotal = r.gauge("nodejs_heap_size_total_bytes", "Process heap size from Node.js in bytes.");
    this.heapUsed = r.gauge("nodejs_heap_size_used_bytes", "Process heap size used from Node.js in bytes.");
    this.external = r.gauge("nodejs_external_memory_bytes", "Node.js external memory size in bytes.");
    this.lag = r.gauge(
      "nodejs_eventloop_lag_seconds",
      "Lag of event loop in seconds: from the previous scrape to the next turn of the loop.",
    );
    this.lagWindow = this.loopDelay
      ? {
          minMs: lagGauge(r, "min", "The minimum recorded event loop delay"),
          maxMs: lagGauge(r, "max", "The maximum recorded event loop delay"),
          meanMs: lagGauge(r, "mean", "The mean of the recorded event loop delays"),
          stddevMs: lagGauge(r, "stddev", "The standard deviation of the recorded event loop delays"),
          p50Ms: lagGauge(r, "p50", "The 50th percentile of the recorded event loop delays"),
          p90Ms: lagGauge(r, "p90", "The 90th percentile of the recorded event loop delays"),
          p99Ms: lagGauge(r, "p99", "The 99th percentile of the recorded event loop delays"),
        }
      : null;
    const legacy = process as unknown as LegacyActive;
    const hasHandles = typeof legacy._getActiveHandles === "function";
    const hasRequests = typeof legacy._getActiveRequests === "function";
    this.handles = hasHandles
      ? r.gauge(
          "nodejs_active_handles",
          "Number of active libuv handles grouped by handle type. Every handle type is C++ class name.",
          ["type"],
        )
      : null;
    this.handlesTotal = hasHandles
      ? r.gauge("nodejs_active_handles_total", "Total number of active handles.")
      : null;
    this.requests = hasRequests
      ? r.gauge(
          "nodejs_active_requests",
          "Number of active libuv requests grouped by request type. Every request type is C++ class name.",
          ["type"],
        )
      : null;
    this.requestsTotal = hasRequests
      ? r.gauge("nodejs_active_requests_total", "Total number of active requests.")
      : null;
    this.resources = r.gauge(
      "nodejs_active_resources",
      "Number of active resources that are currently keeping the event loop alive, grouped by async resource type.",
      ["type"],
    );
    this.resourcesTotal = r.gauge("nodejs_active_resources_total", "Total number of active resources.");
    this.gcDuration = r.histogram(
      "nodejs_gc_duration_seconds",
      "Garbage collection duration by kind, one of major, minor, incremental or weakcb.",
      ["kind"],
      GC_BUCKETS,
    );
    const version = r.gauge("nodejs_version_info", "Node.js version info.", [
      "version",
      "major",
      "minor",
      "patch",
    ]);
    const [major = "", minor = "", patch = ""] = process.versions.node.split(".");
    const started = Math.round(performance.timeOrigin) / 1000;
    this.constants = () => {
      startTime.set(started);
      if (maxFdsGauge && maxFds !== null) maxFdsGauge.set(maxFds);
      version.labels(process.version, major, minor, patch).set(1);
    };
    r.onCollect(() => this.collect());
  }

  /** Starts timing garbage collections (a PerformanceObserver on "gc"). */
  start(): void {
    if (this.gcObserver) return;
    this.gcObserver = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        const detail = (e as PerformanceEntry & { detail?: NodeGCPerformanceDetail | null }).detail;
        const kind = GC_KINDS.get(detail?.kind ?? -1);
        if (kind !== undefined) this.gcDuration.labels(kind).observe(e.duration / 1000);
      }
    });
    this.gcObserver.observe({ entryTypes: ["gc"] });
  }

  stop(): void {
    this.gcObserver?.disconnect();
    this.gcObserver = null;
  }

  private collect(): void {
    this.constants();
    const cpu = process.cpuUsage();
    this.cpuUser.labels().setTotal(cpu.user / 1e6);
    this.cpuSystem.labels().setTotal(cpu.system / 1e6);
    this.cpu.labels().setTotal((cpu.user + cpu.system) / 1e6);
    const mem = process.memoryUsage();
    this.rss.set(mem.rss);
    this.heapTotal.set(mem.heapTotal);
    this.heapUsed.set(mem.heapUsed);
    this.external.set(mem.external);
    if (this.openFds) {
      const n = openFileCount();
      if (n !== null) this.openFds.set(n);
    }
    this.lag.set(this.lagSeconds);
    this.probeLag();
    const w = this.loopDelay?.();
    if (this.lagWindow && w && w.maxMs !== null) {
      for (const [k, g] of Object.entries(this.lagWindow)) {
        const ms = w[k as keyof LoopDelayWindow];
        if (ms !== null) g.set(Math.round(ms * 1000) / 1e6); // µs precision, without float noise
      }
    }
    const legacy = process as unknown as LegacyActive;
    if (this.handles && this.handlesTotal && legacy._getActiveHandles) {
      const list = legacy._getActiveHandles();
      setCounts(this.handles, countBy(list, constructorName));
      this.handlesTotal.set(list.length);
    }
    if (this.requests && this.requestsTotal && legacy._getActiveRequests) {
      const list = legacy._getActiveRequests();
      setCounts(this.requests, countBy(list, constructorName));
      this.requestsTotal.set(list.length);
    }
    const resources = process.getActiveResourcesInfo();
    setCounts(
      this.resources,
      countBy(resources, (s) => s),
    );
    this.resourcesTotal.set(resources.length);
  }

  /** Measures how long the loop takes to come back to an immediate queued now; shown at the next scrape. */
  private probeLag(): void {
    if (this.lagProbing) return;
    this.lagProbing = true;
    const t0 = performance.now();
    setImmediate(() => {
      this.lagSeconds = Math.round((performance.now() - t0) * 1000) / 1e6;
      this.lagProbing = false;
    });
  }
}

function lagGauge(r: MetricsRegistry, stat: string, help: string): Gauge {
  return r.gauge(
    `nodejs_eventloop_lag_${stat}_seconds`,
    `${help}, in the last 10 s window, beyond the 10 ms sampling interval (0 until a window closes).`,
  );
}

function constructorName(o: unknown): string | undefined {
  return (o as { constructor?: { name?: string } } | null)?.constructor?.name;
}

function countBy<T>(list: readonly T[], key: (item: T) => string | undefined): Map<string, number> {
  const out = new Map<string, number>();
  for (const item of list) {
    const k = key(item);
    if (k !== undefined) out.set(k, (out.get(k) ?? 0) + 1);
  }
  return out;
}

/** One child per type present now; types gone since the last scrape are dropped, as prom-client does. */
function setCounts(g: Gauge, counts: Map<string, number>): void {
  g.reset();
  for (const [type, n] of counts) g.labels(type).set(n);
}

/**
 * Open descriptors. Since Linux 6.2, stat() of /proc/self/fd reports the count as its size, without
 * walking the table; listing the directory costs about 1.3 µs per descriptor in the kernel (6.7 ms for
 * 5,000 sockets, all of it on the event loop), so it is only the fallback for older kernels.
 */
function openFileCount(): number | null {
  try {
    const size = statSync("/proc/self/fd").size;
    if (size > 0) return size;
    // The directory's own descriptor, open while it is read, is listed too.
    return readdirSync("/proc/self/fd").length - 1;
  } catch {
    return null;
  }
}

function readable(dir: string): boolean {
  try {
    readdirSync(dir);
    return true;
  } catch {
    return false;
  }
}

/** The soft limit on open files, from /proc/self/limits (Linux); null elsewhere. */
function maxOpenFiles(): number | null {
  try {
    const line = readFileSync("/proc/self/limits", "utf8")
      .split("\n")
      .find((l) => l.startsWith("Max open files"));
    const soft = line?.slice("Max open files".length).trim().split(/\s+/)[0];
    const n = Number(soft);
    return soft !== undefined && Number.isFinite(n) ? n : null;
  } catch {
    return null;
  }
}
