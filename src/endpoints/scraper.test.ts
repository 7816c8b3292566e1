// Runs EndpointMonitor against real simulated replicas on port 0: fields fill from both dialects, slow
// or frozen /metrics, failing health, a crash and restart, removal at run time, and a clean stop.

import assert from "node:assert/strict";
import net from "node:net";
import { after, describe, it } from "node:test";
import { request } from "undici";
import type { EngineDialect } from "../config/inference-pool.js";
import type { EngineOverrides } from "../sim/engine-config.js";
import { makeEngineConfig } from "../sim/engine-config.js";
import { SimReplica } from "../sim/replica.js";
import { EndpointState } from "./endpoint-state.js";
import { type EndpointChange, EndpointMonitor } from "./scraper.js";

const replicas: SimReplica[] = [];
after(() => Promise.all(replicas.map((r) => r.stop())));

async function startReplica(
  dialect: EngineDialect,
  profile = "instant",
  overrides: EngineOverrides = {},
): Promise<SimReplica> {
  const r = new SimReplica({
    name: `r${replicas.length}`,
    port: 0,
    engine: makeEngineConfig(profile, "sim-7b", overrides),
    dialect,
    seed: 3,
  });
  await r.start();
  replicas.push(r);
  return r;
}

// Intervals stay at 100 ms or more: the replicas share this process's event loop, and a busy test machine
// must not turn a probe deadline into a false failure.
function stateFor(r: SimReplica, dialect: EngineDialect, metricsMs = 100, healthMs = 100): EndpointState {
  return new EndpointState({
    pool: "p",
    name: r.name,
    url: r.url,
    dialect,
    metrics: { path: "/metrics", intervalMs: metricsMs },
    health: { path: "/health", intervalMs: healthMs },
  });
}

/** A monitor whose changes are recorded per endpoint name. */
function monitorOf(...endpoints: EndpointState[]): {
  monitor: EndpointMonitor;
  changes: Map<string, EndpointChange[]>;
} {
  const changes = new Map<string, EndpointChange[]>();
  const monitor = new EndpointMonitor(endpoints, {
    maxStartDelayMs: 20,
    onChange: (ep, change) => changes.set(ep.name, [...(changes.get(ep.name) ?? []), change]),
  });
  return { monitor, changes };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, cond: () => boolean, timeoutMs = 5000): Promise<number> {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > timeoutMs) assert.fail(`timed out waiting for: ${what}`);
    await sleep(5);
  }
  return Date.now() - start;
}

async function setFaults(r: SimReplica, update: Record<string, unknown> | "clear"): Promise<void> {
  const res = await request(`${r.url}/admin/faults`, {
    method: update === "clear" ? "DELETE" : "POST",
    headers: { "content-type": "application/json" },
    body: update === "clear" ? undefined : JSON.stringify(update),
  });
  assert.equal(res.statusCode, 200);
  await res.body.dump();
}

async function complete(r: SimReplica, body: Record<string, unknown>, signal?: AbortSignal): Promise<void> {
  const res = await request(`${r.url}/v1/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "sim-7b", ...body }),
    signal,
  });
  await res.body.dump();
}

const LONG_PROMPT = "The customer writes that the invoice total does not match the order. ".repeat(12);

/** Sends the same prompt until the endpoint's windowed prefix hit rate and TTFT p95 are both seen. */
async function trafficUntilRatesSeen(
  r: SimReplica,
  ep: EndpointState,
): Promise<{ hit: number; ttft: number }> {
  let hit: number | null = null;
  let ttft: number | null = null;
  const deadline = Date.now() + 5000;
  while ((hit === null || ttft === null) && Date.now() < deadline) {
    await complete(r, { prompt: LONG_PROMPT, max_tokens: 4 });
    for (let i = 0; i < 12 && (hit === null || ttft === null); i++) {
      if (ep.scrape.prefixCacheHitRate !== null && ep.scrape.prefixCacheHitRate > 0)
        hit = ep.scrape.prefixCacheHitRate;
      if (ep.scrape.ttftP95Seconds !== null) ttft = ep.scrape.ttftP95Seconds;
      await sleep(5);
    }
  }
  assert.ok(hit !== null, "a window with prefix-cache hits");
  assert.ok(ttft !== null, "a window with TTFT observations");
  return { hit, ttft };
}

describe("EndpointMonitor against simulated replicas", () => {
  it("fills every field from a vLLM replica, LoRA adapters included", async () => {
    const r = await startReplica("vllm", "h100-llama8b", { loraModules: ["support-lora"], maxLoras: 2 });
    const ep = stateFor(r, "vllm");
    const { monitor, changes } = monitorOf(ep);
    monitor.start();
    const long = new AbortController();
    try {
      await until("healthy with fresh metrics", () => ep.healthy && ep.metricsFresh(Date.now()));
      assert.ok(changes.get(ep.name)?.includes("healthy"));
      assert.ok(changes.get(ep.name)?.includes("metrics-fresh"));
      assert.equal(ep.waiting, 0);
      assert.equal(ep.running, 0);
      assert.equal(ep.kvUsage, 0);
      assert.equal(ep.blockSize, 16);
      assert.equal(ep.numGpuBlocks, 27_000);
      assert.deepEqual(ep.loras, { max: 2, running: [], waiting: [] });
      assert.ok(ep.scrape.scrapeDurationMs !== null && ep.scrape.scrapeDurationMs >= 0);

      const { hit, ttft } = await trafficUntilRatesSeen(r, ep);
      assert.ok(hit > 0 && hit <= 1);
      assert.ok(ttft > 0 && ttft < 1, `ttft p95 ${ttft}`);

      // A long LoRA request: the engine reports it running, with its adapter and KV blocks.
      complete(
        r,
        { model: "support-lora", prompt: LONG_PROMPT, max_tokens: 3000, ignore_eos: true },
        long.signal,
      ).catch(() => {});
      await until("the LoRA request seen running", () => ep.running === 1);
      await until("its adapter listed", () => ep.loras?.running[0] === "support-lora");
      assert.ok(ep.kvUsage !== null && ep.kvUsage > 0);
    } finally {
      long.abort();
      await monitor.stop();
    }
  });

  it("fills the fields SGLang reports and leaves LoRA null", async () => {
    const r = await startReplica("sglang");
    const ep = stateFor(r, "sglang");
    const { monitor } = monitorOf(ep);
    monitor.start();
    try {
      await until("fresh metrics", () => ep.metricsFresh(Date.now()));
      assert.equal(ep.waiting, 0);
      assert.equal(ep.running, 0);
      assert.equal(ep.kvUsage, 0);
      assert.equal(ep.blockSize, 16);
      assert.equal(ep.numGpuBlocks, 65_536);
      assert.equal(ep.loras, null);
      const { hit, ttft } = await trafficUntilRatesSeen(r, ep);
      assert.ok(hit > 0 && hit <= 1);
      assert.ok(ttft >= 0);
    } finally {
      await monitor.stop();
    }
  });

  it("a /metrics slower than the deadline makes metrics stale within the bound, then fresh again", async () => {
    const r = await startReplica("vllm");
    const ep = stateFor(r, "vllm", 100, 1000);
    assert.equal(ep.metricsStalenessMs, 400);
    const { monitor, changes } = monitorOf(ep);
    const seen = () => (changes.get(ep.name) ?? []).filter((c) => c.startsWith("metrics-"));
    monitor.start();
    try {
      await until("fresh metrics", () => ep.metricsFresh(Date.now()));
      const errors = ep.scrape.scrapeErrors;
      const mark = seen().length;
      await setFaults(r, { metricsDelayMs: 300 });
      const tookMs = await until("metrics stale", () => !ep.metricsFresh(Date.now()));
      // Stale once the last good scrape is older than the bound, which it passed at most one
      // interval after the fault (plus scheduling slack on a busy machine).
      assert.ok(Date.now() - ep.scrapedAt! > ep.metricsStalenessMs);
      assert.ok(tookMs <= ep.metricsStalenessMs + 100 + 250, `stale after ${tookMs} ms`);
      await until("the stale change reported", () => seen().at(-1) === "metrics-stale");
      assert.ok(ep.scrape.scrapeErrors >= errors + 2);
      assert.match(ep.scrape.lastScrapeError ?? "", /^timeout: no answer within 100 ms/);
      assert.ok(ep.healthy, "slow metrics are not ill health");

      await setFaults(r, "clear");
      await until("fresh again", () => ep.metricsFresh(Date.now()));
      await until("the fresh change reported", () => seen().at(-1) === "metrics-fresh");
      assert.deepEqual(seen().slice(mark), ["metrics-stale", "metrics-fresh"], "each change reported once");
    } finally {
      await monitor.stop();
    }
  });

  it("a frozen /metrics page keeps the scraped values unchanged", async () => {
    const r = await startReplica("vllm", "h100-llama8b");
    const ep = stateFor(r, "vllm");
    const { monitor } = monitorOf(ep);
    monitor.start();
    const long = new AbortController();
    try {
      await until("fresh metrics", () => ep.metricsFresh(Date.now()));
      await setFaults(r, { metricsStale: true });
      complete(r, { prompt: LONG_PROMPT, max_tokens: 3000, ignore_eos: true }, long.signal).catch(() => {});
      await until("the engine running the request", () => r.engine.numRunning === 1);
      const before = ep.scrapedAt!;
      await until("three more scrapes", () => ep.scrapedAt! >= before + 150);
      assert.equal(ep.running, 0, "the frozen page still says idle");
      assert.equal(ep.kvUsage, 0);

      await setFaults(r, "clear");
      await until("the live page read", () => ep.running === 1);
      assert.ok(ep.kvUsage! > 0);
    } finally {
      long.abort();
      await monitor.stop();
    }
  });

  it("failing health flips healthy after the threshold, reported once, and back", async () => {
    const r = await startReplica("sglang");
    const ep = stateFor(r, "sglang");
    const changes: string[] = [];
    const monitor = new EndpointMonitor([ep], {
      maxStartDelayMs: 20,
      onChange: (e, change) => {
        if (change === "healthy" || change === "unhealthy")
          changes.push(`${change}@${e.health.consecutiveFailures}`);
      },
    });
    monitor.start();
    try {
      await until("healthy", () => ep.healthy);
      const mark = changes.length;
      await setFaults(r, { healthFail: true });
      await until("unhealthy", () => !ep.healthy);
      assert.equal(ep.health.status, "unhealthy");
      assert.equal(ep.health.lastHealthError, "HTTP 503");
      await until("more failed checks", () => ep.health.consecutiveFailures >= 4);
      // Reported once, on the second failure in a row (the default threshold), not on every check.
      assert.deepEqual(changes.slice(mark), ["unhealthy@2"]);
      await setFaults(r, "clear");
      await until("healthy again", () => ep.healthy);
      assert.deepEqual(changes.slice(mark), ["unhealthy@2", "healthy@0"]);
    } finally {
      await monitor.stop();
    }
  });

  it("a health check slower than its interval is not a failure; past its deadline it is", async () => {
    const r = await startReplica("vllm");
    const ep = stateFor(r, "vllm"); // checks every 100 ms
    const monitor = new EndpointMonitor([ep], { maxStartDelayMs: 20 });
    monitor.start();
    try {
      await until("healthy", () => ep.healthy);
      await setFaults(r, { healthDelayMs: 300 });
      const before = ep.health.lastHealthAt!;
      await new Promise((resolve) => setTimeout(resolve, 1000));
      assert.ok(ep.health.lastHealthAt! > before + 300, "slow checks were answered meanwhile");
      assert.ok(ep.healthy, "three times its interval, within the 1 s deadline: healthy");
      assert.equal(ep.health.consecutiveFailures, 0);
      assert.equal(ep.health.lastHealthError, null);
    } finally {
      await monitor.stop();
    }
    const strict = new EndpointMonitor([ep], { maxStartDelayMs: 20, healthTimeoutMs: 200 });
    strict.start();
    try {
      await until("unhealthy past a 200 ms deadline", () => !ep.healthy);
      assert.match(ep.health.lastHealthError ?? "", /^timeout: no answer within 200 ms/);
    } finally {
      await strict.stop();
      await setFaults(r, "clear");
    }
  });

  it("a crashed replica is unhealthy with stale metrics, and recovers when it restarts", async () => {
    const r = await startReplica("vllm");
    const ep = stateFor(r, "vllm");
    const { monitor } = monitorOf(ep);
    monitor.start();
    try {
      await until("healthy with fresh metrics", () => ep.healthy && ep.metricsFresh(Date.now()));
      await setFaults(r, { crashAtMs: 0, restartAfterMs: 800 });
      await until("unhealthy", () => !ep.healthy);
      assert.match(ep.health.lastHealthError ?? "", /ECONNREFUSED|ECONNRESET|socket|closed/i);
      await until("metrics stale", () => !ep.metricsFresh(Date.now()));
      assert.ok(ep.scrape.lastScrapeError !== null);
      await until("healthy after the restart", () => ep.healthy && ep.metricsFresh(Date.now()));
      assert.equal(r.crashes, 1);
    } finally {
      await monitor.stop();
    }
  });

  it("remove() stops probing an endpoint at once; add() at run time starts one", async () => {
    const a = await startReplica("vllm");
    const b = await startReplica("vllm");
    const epA = stateFor(a, "vllm");
    const epB = stateFor(b, "vllm");
    const { monitor } = monitorOf(epA);
    monitor.start();
    try {
      monitor.add(epB);
      assert.deepEqual(monitor.endpoints(), [epA, epB]);
      await until(
        "both probed",
        () => epA.scrapedAt !== null && epB.scrapedAt !== null && epA.healthy && epB.healthy,
      );
      assert.equal(monitor.remove(epA), true);
      assert.equal(monitor.remove(epA), false);
      assert.equal(monitor.has(epA), false);
      const scraped = epA.scrapedAt;
      const checked = epA.health.lastHealthAt;
      const errors = epA.scrape.scrapeErrors;
      const bBefore = epB.scrapedAt!;
      await sleep(400);
      assert.equal(epA.scrapedAt, scraped);
      assert.equal(epA.health.lastHealthAt, checked);
      assert.equal(epA.scrape.scrapeErrors, errors);
      await until("the other endpoint still scraped", () => epB.scrapedAt! > bBefore);
    } finally {
      await monitor.stop();
    }
  });
});

describe("EndpointMonitor.stop", () => {
  it("aborts a probe in flight and leaves no timers or sockets behind", async () => {
    // Accepts connections and never answers, so the first scrape and check hang until aborted. It reads
    // (and drops) what arrives so it sees the monitor's sockets close.
    const blackHole = net.createServer((socket) => socket.resume());
    await new Promise<void>((resolve) => blackHole.listen(0, "127.0.0.1", resolve));
    const port = (blackHole.address() as net.AddressInfo).port;
    const ep = new EndpointState({
      pool: "p",
      name: "hole",
      url: `http://127.0.0.1:${port}`,
      dialect: "vllm",
      metrics: { path: "/metrics", intervalMs: 10_000 },
      health: { path: "/health", intervalMs: 10_000 },
    });
    const count = (kind: string) => process.getActiveResourcesInfo().filter((k) => k === kind).length;
    const timersBefore = count("Timeout");
    const socketsBefore = count("TCPSocketWrap");
    const monitor = new EndpointMonitor([ep], { maxStartDelayMs: 0 });
    monitor.start();
    await sleep(50);
    assert.ok(count("Timeout") > timersBefore, "probe deadlines are armed");
    const t0 = Date.now();
    await monitor.stop();
    assert.ok(Date.now() - t0 < 1000, "stop does not wait for the deadline");
    assert.equal(monitor.running, false);
    assert.equal(count("Timeout"), timersBefore);
    await new Promise<void>((resolve) => blackHole.close(() => resolve()));
    await until("the monitor's sockets closed", () => count("TCPSocketWrap") <= socketsBefore);
    assert.equal(ep.scrape.scrapeErrors, 0, "a cancelled scrape is not an engine error");
    assert.equal(ep.health.lastHealthAt, null, "a cancelled check is not a failed check");
  });

  it("can start again after a stop", async () => {
    const r = await startReplica("vllm");
    const ep = stateFor(r, "vllm");
    const monitor = new EndpointMonitor([ep], { maxStartDelayMs: 0 });
    monitor.start();
    await until("scraped", () => ep.scrapedAt !== null);
    await monitor.stop();
    const at = ep.scrapedAt!;
    monitor.start();
    try {
      await until("scraped again", () => ep.scrapedAt! > at);
    } finally {
      await monitor.stop();
    }
  });
});
