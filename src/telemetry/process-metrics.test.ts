import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Platform, startPlatform } from "../testing/platform.js";
import type { LoopDelayWindow } from "./loop-delay.js";
import { MetricsRegistry } from "./metrics.js";
import { ProcessMetrics } from "./process-metrics.js";
import { parsePrometheusText, type Sample } from "./prom-parse.js";

/** Each family's `# TYPE` in an exposition. */
function types(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) out.set(m[1]!, m[2]!);
  return out;
}

const FAMILIES: Record<string, string> = {
  process_cpu_user_seconds_total: "counter",
  process_cpu_system_seconds_total: "counter",
  process_cpu_seconds_total: "counter",
  process_start_time_seconds: "gauge",
  process_resident_memory_bytes: "gauge",
  nodejs_heap_size_total_bytes: "gauge",
  nodejs_heap_size_used_bytes: "gauge",
  nodejs_external_memory_bytes: "gauge",
  nodejs_eventloop_lag_seconds: "gauge",
  nodejs_eventloop_lag_min_seconds: "gauge",
  nodejs_eventloop_lag_max_seconds: "gauge",
  nodejs_eventloop_lag_mean_seconds: "gauge",
  nodejs_eventloop_lag_stddev_seconds: "gauge",
  nodejs_eventloop_lag_p50_seconds: "gauge",
  nodejs_eventloop_lag_p90_seconds: "gauge",
  nodejs_eventloop_lag_p99_seconds: "gauge",
  nodejs_active_handles: "gauge",
  nodejs_active_handles_total: "gauge",
  nodejs_active_requests: "gauge",
  nodejs_active_requests_total: "gauge",
  nodejs_active_resources: "gauge",
  nodejs_active_resources_total: "gauge",
  nodejs_gc_duration_seconds: "histogram",
  nodejs_version_info: "gauge",
  ...(process.platform === "linux" ? { process_open_fds: "gauge", process_max_fds: "gauge" } : {}),
};

describe("process metrics on a running gateway's /metrics", () => {
  let p: Platform;
  before(async () => {
    p = await startPlatform();
  });
  after(() => p.stop());

  const scrape = async () => {
    const res = await fetch(`${p.gateway.adminUrl}/metrics`);
    assert.equal(res.status, 200);
    const text = await res.text();
    return { text, m: parsePrometheusText(text), types: types(text) };
  };
  const one = (m: Map<string, Sample[]>, name: string): number => {
    const s = m.get(name);
    assert.equal(s?.length, 1, `${name}: one sample`);
    return s[0]!.value;
  };

  it("has every family, with prom-client's type, beside the gateway's own", async () => {
    const { text, m, types: t } = await scrape();
    assert.equal(m.malformed, 0);
    assert.ok(t.has("ai_gateway_requests_total"), "the gateway's families are still there");
    for (const [name, type] of Object.entries(FAMILIES)) assert.equal(t.get(name), type, name);
    if (process.platform !== "linux") assert.ok(!t.has("process_open_fds"));
    assert.ok(!text.includes("NaN"), "no NaN values");
  });

  it("reports sane values: CPU and memory, start time, descriptors, handles, version", async () => {
    const before = Date.now() / 1000;
    const { m } = await scrape();
    const user = one(m, "process_cpu_user_seconds_total");
    const system = one(m, "process_cpu_system_seconds_total");
    assert.ok(user > 0 && system >= 0);
    assert.ok(Math.abs(one(m, "process_cpu_seconds_total") - (user + system)) < 1e-5);
    const start = one(m, "process_start_time_seconds");
    assert.ok(start <= before, `start ${start} <= now ${before}`);
    assert.ok(start >= before - process.uptime() - 5, "within this process's lifetime");
    assert.ok(one(m, "process_resident_memory_bytes") > 10 * 1024 * 1024, "RSS above 10 MiB");
    const heapTotal = one(m, "nodejs_heap_size_total_bytes");
    const heapUsed = one(m, "nodejs_heap_size_used_bytes");
    assert.ok(heapUsed > 0 && heapUsed <= heapTotal, `heap used ${heapUsed} <= total ${heapTotal}`);
    assert.ok(one(m, "nodejs_external_memory_bytes") > 0);
    if (process.platform === "linux") {
      const open = one(m, "process_open_fds");
      const max = one(m, "process_max_fds");
      assert.ok(open >= 3 && open <= max, `open fds ${open}, max ${max}`);
    }
    // The gateway's listener (and the engines' in this process) keep the loop alive.
    const handles = m.get("nodejs_active_handles") ?? [];
    assert.ok(
      handles.some((s) => s.labels.type === "Server" && s.value >= 1),
      JSON.stringify(handles),
    );
    assert.equal(
      one(m, "nodejs_active_handles_total"),
      handles.reduce((n, s) => n + s.value, 0),
    );
    assert.ok(one(m, "nodejs_active_requests_total") >= 0);
    const resources = m.get("nodejs_active_resources") ?? [];
    assert.ok(resources.some((s) => s.labels.type === "TCPServerWrap" && s.value >= 1));
    assert.equal(
      one(m, "nodejs_active_resources_total"),
      resources.reduce((n, s) => n + s.value, 0),
    );
    const [major, minor, patch] = process.versions.node.split(".");
    assert.deepEqual(m.get("nodejs_version_info"), [
      { labels: { version: process.version, major, minor, patch }, value: 1 },
    ]);
    for (const stat of ["", "_min", "_max", "_mean", "_stddev", "_p50", "_p90", "_p99"]) {
      const v = one(m, `nodejs_eventloop_lag${stat}_seconds`);
      assert.ok(v >= 0 && v < 5, `nodejs_eventloop_lag${stat}_seconds ${v}`);
    }
  });

  it("CPU counters only go up from one scrape to the next", async () => {
    const a = (await scrape()).m;
    const spin = performance.now() + 30;
    while (performance.now() < spin) {
      // burn some CPU
    }
    const b = (await scrape()).m;
    for (const name of ["process_cpu_user_seconds_total", "process_cpu_seconds_total"])
      assert.ok(one(b, name) > one(a, name), name);
    assert.ok(one(b, "process_cpu_system_seconds_total") >= one(a, "process_cpu_system_seconds_total"));
  });

  it("times garbage collections by kind", async () => {
    const gc = (globalThis as { gc?: () => void }).gc;
    if (gc) gc();
    else {
      // No --expose-gc: short-lived garbage well past the young generation makes V8 scavenge.
      let keep = 0;
      for (let i = 0; i < 400_000; i++) keep += new Array(32).fill(i).length;
      assert.ok(keep > 0);
    }
    let counts: Sample[] = [];
    for (const until = Date.now() + 5000; Date.now() < until; ) {
      counts = (await scrape()).m.get("nodejs_gc_duration_seconds_count") ?? [];
      if (counts.some((s) => s.value >= 1)) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const kinds = counts.filter((s) => s.value >= 1).map((s) => s.labels.kind);
    assert.ok(kinds.length > 0, "a collection was observed");
    for (const k of kinds) assert.ok(["major", "minor", "incremental", "weakcb"].includes(k!), k);
    if (gc) assert.ok(kinds.includes("major"), `a forced gc is a major one: ${kinds}`);
  });
});

describe("ProcessMetrics", () => {
  const window: LoopDelayWindow = {
    minMs: 0.1,
    p50Ms: 1.5,
    p90Ms: 2.25,
    p99Ms: 7,
    maxMs: 12.345,
    meanMs: 1.75,
    stddevMs: 0.5,
  };

  it("shows the loop-delay monitor's last window in seconds, and zeros before it closes", () => {
    let w: LoopDelayWindow = {
      minMs: null,
      p50Ms: null,
      p90Ms: null,
      p99Ms: null,
      maxMs: null,
      meanMs: null,
      stddevMs: null,
    };
    const r = new MetricsRegistry();
    new ProcessMetrics(r, { loopDelay: () => w });
    const first = parsePrometheusText(r.expose());
    assert.equal(first.get("nodejs_eventloop_lag_p99_seconds")?.[0]?.value, 0);
    w = window;
    const m = parsePrometheusText(r.expose());
    const v = (stat: string) => m.get(`nodejs_eventloop_lag_${stat}_seconds`)?.[0]?.value;
    assert.deepEqual(
      ["min", "p50", "p90", "p99", "max", "mean", "stddev"].map(v),
      [0.0001, 0.0015, 0.00225, 0.007, 0.012345, 0.00175, 0.0005],
    );
  });

  it("without a monitor, leaves the window families out; survives a registry reset", () => {
    const r = new MetricsRegistry();
    new ProcessMetrics(r);
    r.reset();
    const text = r.expose();
    assert.ok(!text.includes("nodejs_eventloop_lag_p50_seconds"));
    assert.ok(text.includes("nodejs_eventloop_lag_seconds"));
    const m = parsePrometheusText(text);
    assert.equal(m.get("nodejs_version_info")?.[0]?.value, 1, "set again at the scrape after a reset");
    assert.ok((m.get("process_start_time_seconds")?.[0]?.value ?? 0) > 1.6e9);
  });
});
