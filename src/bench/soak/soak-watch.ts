// What the soak benchmark watches while the load runs: each engine's own /health (the ground truth of
// "up and healthy" for the failure classification), the gateway's view of its endpoints
// (/admin/endpoints: when it took a crashed engine out and let it back), and the gateway process itself
// (RSS and fds from /proc, heap from the memory probe, event-loop delay, in-flight and queued requests
// from /metrics). Every loop is a timer stopped by stop(); all requests go to loopback with timeouts.

import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { Agent, request } from "undici";
import { parsePrometheusText } from "../../telemetry/prom-parse.js";
import type { FleetTimeline } from "./soak-classify.js";
import type { ProbeSample } from "./soak-probe.js";

export interface EngineRef {
  /** The gateway's endpoint name. */
  name: string;
  url: string;
}

/**
 * A crash is asked for with a fault POST that the sim answers before it crashes (a 0 ms timer): a
 * health check sent within this long after the POST may still have been answered by the old process.
 */
const CRASH_SETTLE_MS = 500;

/** Polls every engine's /health; down and up transitions go into the timeline. */
export class FleetWatch {
  private timer: NodeJS.Timeout | null = null;
  private readonly agent = new Agent({ connections: 2, headersTimeout: 1000, bodyTimeout: 1000 });
  private readonly upIgnoredBefore = new Map<string, number>();
  private readonly busy = new Set<string>();

  constructor(
    private readonly engines: readonly EngineRef[],
    private readonly timeline: FleetTimeline,
    private readonly originMs: number,
    private readonly intervalMs = 250,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      for (const e of this.engines) void this.check(e);
    }, this.intervalMs);
  }

  /**
   * The benchmark is crashing `name` now: down from this moment, whatever a late health check says.
   * Returns the moment (ms from the start of the load).
   */
  crashing(name: string): number {
    const now = performance.now() - this.originMs;
    this.timeline.markDown(name, now, "crash");
    this.upIgnoredBefore.set(name, now + CRASH_SETTLE_MS);
    return now;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.agent.close();
  }

  private async check(e: EngineRef): Promise<void> {
    if (this.busy.has(e.name)) return;
    this.busy.add(e.name);
    const sentAt = performance.now() - this.originMs;
    let ok = false;
    try {
      const res = await request(`${e.url}/health`, { dispatcher: this.agent });
      await res.body.dump();
      ok = res.statusCode === 200;
    } catch {
      ok = false;
    } finally {
      this.busy.delete(e.name);
    }
    const now = performance.now() - this.originMs;
    if (ok) {
      if (sentAt >= (this.upIgnoredBefore.get(e.name) ?? 0)) this.timeline.markUp(e.name, now);
    } else this.timeline.markDown(e.name, sentAt, "health");
  }
}

export interface RoutableChange {
  atMs: number;
  endpoint: string;
  routable: boolean;
  /** The gateway's reason when not routable ("not healthy", "ejected for … ms", "circuit open …"). */
  why: string | null;
}

interface AdminEndpoint {
  name: string;
  url: string;
  routable: boolean;
  unavailable: string | null;
  inflight: { requests: number; tokens: number };
}

/** The admin token the soak gives its gateway (TOKENGATE_ADMIN_TOKEN), to read /admin/endpoints with. */
export const SOAK_ADMIN_TOKEN = "soak-admin-token-0123456789";

/** GET /admin/endpoints on the gateway's admin listener, flattened over pools. */
export async function adminEndpoints(adminUrl: string, agent?: Agent): Promise<AdminEndpoint[]> {
  const res = await request(`${adminUrl}/admin/endpoints`, {
    headers: { authorization: `Bearer ${SOAK_ADMIN_TOKEN}` },
    dispatcher: agent,
    headersTimeout: 2000,
    bodyTimeout: 2000,
  });
  const pools = (await res.body.json()) as { endpoints: AdminEndpoint[] }[];
  return pools.flatMap((p) => p.endpoints);
}

/** Polls the gateway's /admin/endpoints and keeps each change of an endpoint's routability. */
export class GatewayView {
  readonly changes: RoutableChange[] = [];
  private readonly last = new Map<string, boolean>();
  private timer: NodeJS.Timeout | null = null;
  private readonly agent = new Agent({ connections: 1 });
  private busy = false;

  constructor(
    private readonly gatewayUrl: string,
    private readonly originMs: number,
    private readonly intervalMs = 500,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.poll(), this.intervalMs);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.agent.close();
  }

  private async poll(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      const eps = await adminEndpoints(this.gatewayUrl, this.agent);
      const at = performance.now() - this.originMs;
      for (const e of eps) {
        if (this.last.get(e.name) === e.routable) continue;
        this.last.set(e.name, e.routable);
        this.changes.push({
          atMs: Math.round(at),
          endpoint: e.name,
          routable: e.routable,
          why: e.unavailable,
        });
      }
    } catch {
      // A missed poll: the next one sees the state.
    } finally {
      this.busy = false;
    }
  }
}

/** One reading of the gateway process. Memory in MiB, times in ms. */
export interface GatewaySample {
  /** Seconds from the start of the load. */
  t_s: number;
  rss_mib: number | null;
  /** From the memory probe's last periodic reading (null before its first). */
  heap_used_mib: number | null;
  heap_total_mib: number | null;
  external_mib: number | null;
  /** `process_resident_memory_bytes` / `nodejs_heap_size_used_bytes` when the gateway exposes them. */
  metric_rss_mib: number | null;
  metric_heap_used_mib: number | null;
  fds: number | null;
  /** The gateway's last complete 10 s window (ai_gateway_event_loop_delay_seconds). */
  loop_p99_ms: number | null;
  loop_max_ms: number | null;
  inflight: number | null;
  queued: number | null;
}

const MIB = 1024 * 1024;
const mib = (bytes: number) => Math.round((bytes / MIB) * 10) / 10;

/** VmRSS of a process in bytes, from /proc/<pid>/status; null when it is gone. */
export function procRssBytes(pid: number): number | null {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** Open file descriptors of a process (sockets, files, pipes); null when it is gone. */
export function procFdCount(pid: number): number | null {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return null;
  }
}

/** Open fds of a process by kind (socket, pipe, anon_inode, file); null when it is gone. */
export function procFdKinds(pid: number): Record<string, number> | null {
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return null;
  }
  const out: Record<string, number> = {};
  for (const fd of fds) {
    let target: string;
    try {
      target = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue; // closed meanwhile
    }
    const kind = /^(socket|pipe|anon_inode):/.exec(target)?.[1] ?? "file";
    out[kind] = (out[kind] ?? 0) + 1;
  }
  return out;
}

/** The memory probe's readings so far (one JSON line each). */
export function readProbe(file: string): ProbeSample[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return [];
  }
  const out: ProbeSample[] = [];
  for (const line of text.split("\n")) {
    if (!line.startsWith("{")) continue;
    try {
      out.push(JSON.parse(line) as ProbeSample);
    } catch {
      // A line being written as it was read.
    }
  }
  return out;
}

const GATEWAY_FAMILIES = new Set([
  "ai_gateway_event_loop_delay_seconds",
  "ai_gateway_inflight_requests",
  "ai_gateway_queue_depth",
  "process_resident_memory_bytes",
  "nodejs_heap_size_used_bytes",
]);

export interface GatewayMetricsReading {
  loopP99Ms: number | null;
  loopMaxMs: number | null;
  inflight: number;
  queued: number;
  rssBytes: number | null;
  heapUsedBytes: number | null;
}

/** The figures the soak reads from the gateway's /metrics text. */
export function readGatewayMetrics(text: string): GatewayMetricsReading {
  const m = parsePrometheusText(text, { only: GATEWAY_FAMILIES });
  const sum = (name: string) => (m.get(name) ?? []).reduce((a, s) => a + s.value, 0);
  const one = (name: string) => m.get(name)?.[0]?.value ?? null;
  const loop = (q: string) => {
    const s = (m.get("ai_gateway_event_loop_delay_seconds") ?? []).find((x) => x.labels.quantile === q);
    return s && Number.isFinite(s.value) ? Math.round(s.value * 1e5) / 100 : null;
  };
  return {
    loopP99Ms: loop("0.99"),
    loopMaxMs: loop("1"),
    inflight: sum("ai_gateway_inflight_requests"),
    queued: sum("ai_gateway_queue_depth"),
    rssBytes: one("process_resident_memory_bytes"),
    heapUsedBytes: one("nodejs_heap_size_used_bytes"),
  };
}

export async function scrapeGateway(gatewayUrl: string, agent?: Agent): Promise<GatewayMetricsReading> {
  const res = await request(`${gatewayUrl}/metrics`, {
    dispatcher: agent,
    headersTimeout: 2000,
    bodyTimeout: 2000,
  });
  return readGatewayMetrics(await res.body.text());
}

/** Samples the gateway process every `intervalMs` until stopped. */
export class GatewaySampler {
  readonly samples: GatewaySample[] = [];
  private timer: NodeJS.Timeout | null = null;
  private readonly agent = new Agent({ connections: 1 });
  private busy = false;

  constructor(
    private readonly pid: number,
    private readonly gatewayUrl: string,
    private readonly probeFile: string,
    private readonly originMs: number,
    private readonly intervalMs = 5000,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.sample(), this.intervalMs);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    while (this.busy) await new Promise((r) => setTimeout(r, 10));
    await this.agent.close();
  }

  /** One reading now (also called at the end, after the settle). */
  async sample(): Promise<GatewaySample | null> {
    if (this.busy) return null;
    this.busy = true;
    try {
      const t_s = Math.round(performance.now() - this.originMs) / 1000;
      const rss = procRssBytes(this.pid);
      const fds = procFdCount(this.pid);
      const probe =
        readProbe(this.probeFile)
          .filter((p) => !p.gc)
          .at(-1) ?? null;
      let metrics: GatewayMetricsReading | null = null;
      try {
        metrics = await scrapeGateway(this.gatewayUrl, this.agent);
      } catch {
        metrics = null;
      }
      const s: GatewaySample = {
        t_s,
        rss_mib: rss === null ? null : mib(rss),
        heap_used_mib: probe ? mib(probe.heapUsed) : null,
        heap_total_mib: probe ? mib(probe.heapTotal) : null,
        external_mib: probe ? mib(probe.external) : null,
        metric_rss_mib: metrics?.rssBytes != null ? mib(metrics.rssBytes) : null,
        metric_heap_used_mib: metrics?.heapUsedBytes != null ? mib(metrics.heapUsedBytes) : null,
        fds,
        loop_p99_ms: metrics?.loopP99Ms ?? null,
        loop_max_ms: metrics?.loopMaxMs ?? null,
        inflight: metrics?.inflight ?? null,
        queued: metrics?.queued ?? null,
      };
      this.samples.push(s);
      return s;
    } finally {
      this.busy = false;
    }
  }
}
