// Pins EndpointState without a network: leases, passive ejection and its cooldown, the health state
// machine, the staleness bound, rates from the change between scrapes, and the JSON snapshot.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DEFAULT_POOL_FLOW } from "../config/inference-pool.js";
import { DEFAULT_CIRCUIT_BREAKER, DEFAULT_OUTLIER_DETECTION } from "../config/pool-resilience.js";
import { DEFAULT_MODELS_POLL } from "../config/pool-serving.js";
import type { EngineReading } from "./dialects.js";
import { EndpointState } from "./endpoint-state.js";
import { metricsStalenessBound } from "./engine-scrape.js";
import { snapshotOf } from "./snapshot.js";

function endpoint(over: Partial<ConstructorParameters<typeof EndpointState>[0]> = {}): EndpointState {
  return new EndpointState({
    pool: "online",
    name: "e1",
    url: "http://127.0.0.1:1",
    dialect: "vllm",
    metrics: { path: "/metrics", intervalMs: 250 },
    health: { path: "/health", intervalMs: 1000 },
    ...over,
  });
}

function reading(over: Partial<EngineReading> = {}): EngineReading {
  return {
    waiting: 1,
    running: 2,
    kvUsage: 0.5,
    blockSize: 16,
    numGpuBlocks: 100,
    loras: null,
    prefixHits: null,
    prefixQueries: null,
    prefixHitRateGauge: null,
    ttftBuckets: null,
    ...over,
  };
}

const INF = Number.POSITIVE_INFINITY;

describe("EndpointState: in-flight leases", () => {
  it("counts requests and tokens while leased; a second release changes nothing", () => {
    const ep = endpoint();
    const a = ep.acquire(100);
    const b = ep.acquire(30);
    assert.equal(ep.inflightRequests, 2);
    assert.equal(ep.inflightTokens, 130);
    assert.equal(a.release(), true);
    assert.equal(a.release(), false);
    assert.equal(a.released, true);
    assert.equal(ep.inflightRequests, 1);
    assert.equal(ep.inflightTokens, 30);
    b.release();
    b.release();
    assert.equal(ep.inflightRequests, 0);
    assert.equal(ep.inflightTokens, 0);
  });

  it("counts the prompt part of its tokens and the pending prefill, both back to zero on release", () => {
    const ep = endpoint();
    const a = ep.acquire(600, { uncached: 400, stream: true, prompt: 500 });
    const b = ep.acquire(90, { uncached: 0, stream: false, prompt: 900 });
    assert.equal(ep.inflightPromptTokens, 590, "a prompt never counts for more than its request's tokens");
    assert.equal(ep.pendingPrefillTokens, 400);
    a.firstToken();
    assert.equal(ep.pendingPrefillTokens, 0);
    a.release();
    b.release();
    b.release();
    assert.equal(ep.inflightPromptTokens, 0);
    assert.equal(ep.pendingPrefillTokens, 0);
  });

  it("refuses negative or non-finite token counts", () => {
    const ep = endpoint();
    assert.throws(() => ep.acquire(-1), RangeError);
    assert.throws(() => ep.acquire(Number.NaN), RangeError);
    assert.equal(ep.inflightRequests, 0);
  });
});

describe("EndpointState: passive ejection", () => {
  const policy = { consecutiveFailures: 3, baseEjectionMs: 1000, maxEjectionMs: 2500 };
  const circuit = { minRequests: 1000 }; // keep the breaker out of these

  it("ejects after N consecutive 5xx or timeouts, for the base time, then lets the endpoint back", () => {
    const ep = endpoint({ ejection: policy, circuit });
    ep.health.recordHealth(true, 0, null, 2, 1);
    assert.equal(ep.health.reportFailure(502, 10), null);
    assert.equal(ep.health.reportFailure("timeout", 11), null);
    assert.equal(ep.health.reportFailure("timeout", 12), "ejected");
    assert.equal(ep.ejectedUntil, 1012);
    assert.equal(ep.health.ejected(500), true);
    assert.equal(ep.routable(500), false);
    assert.equal(ep.health.ejected(1012), false);
    assert.equal(ep.routable(1012), true);
  });

  it("ejects at once on a reset before any byte (a local-origin failure)", () => {
    const ep = endpoint({ ejection: policy, circuit });
    ep.health.recordHealth(true, 0, null, 2, 1);
    assert.equal(ep.health.reportFailure("reset", 10), "ejected");
    assert.equal(ep.ejectedUntil, 1010);
  });

  it("marks a refused endpoint down at once; only a health check sent afterwards brings it back", () => {
    const ep = endpoint({ ejection: policy, circuit });
    let outs = 0;
    ep.onOut = () => outs++;
    ep.health.recordHealth(true, 0, null, 2, 1);
    assert.equal(ep.health.reportFailure("connect", 100), "down");
    assert.equal(ep.routable(100), false);
    assert.equal(ep.health.status, "unhealthy");
    assert.equal(outs, 1, "its prefix claims are dropped");
    assert.equal(
      ep.health.recordHealth(true, 120, null, 2, 1, 90),
      null,
      "a check sent before the refusal is stale",
    );
    assert.equal(ep.routable(120), false);
    assert.equal(ep.health.recordHealth(true, 150, null, 2, 1, 110), "healthy");
    assert.equal(ep.routable(150), true);
  });

  it("does not count 4xx or 429, and any answered request ends the streak", () => {
    const ep = endpoint({ ejection: policy, circuit });
    for (let i = 0; i < 10; i++) assert.equal(ep.health.reportFailure(i % 2 ? 429 : 400, i), null);
    ep.health.reportFailure(500, 20);
    ep.health.reportFailure(503, 21);
    ep.health.reportSuccess();
    ep.health.reportFailure("timeout", 22);
    ep.health.reportFailure(500, 23);
    assert.equal(ep.ejectedUntil, 0);
    ep.health.reportFailure(404, 24);
    ep.health.reportFailure(500, 25);
    assert.equal(ep.ejectedUntil, 0);
  });

  it("ignores failures while ejected and lengthens each further ejection up to the cap", () => {
    const ep = endpoint({ ejection: policy, circuit });
    const ejectAt = (t: number) => {
      let ejected = false;
      for (let i = 0; i < 3; i++) ejected = ep.health.reportFailure("timeout", t) === "ejected";
      return ejected;
    };
    assert.equal(ejectAt(0), true);
    assert.equal(ep.ejectedUntil, 1000);
    // Requests sent before the ejection fail during it; they must not extend it.
    assert.equal(ejectAt(500), false);
    assert.equal(ep.ejectedUntil, 1000);
    assert.equal(ejectAt(1000), true);
    assert.equal(ep.ejectedUntil, 3000);
    assert.equal(ejectAt(3000), true);
    assert.equal(ep.ejectedUntil, 5500, "capped at maxEjectionMs");
    // Back in for longer than the cap: the next ejection starts from the base time again.
    assert.equal(ejectAt(9000), true);
    assert.equal(ep.ejectedUntil, 10_000);
  });

  it("does not eject past the pool's cap, and says so", () => {
    const ep = endpoint({ ejection: policy, circuit });
    ep.ejectionAllowed = () => false;
    assert.equal(ep.health.reportFailure("reset", 10), "capped");
    assert.equal(ep.ejectedUntil, 0);
    ep.ejectionAllowed = () => true;
    assert.equal(ep.health.reportFailure("reset", 20), "ejected");
    assert.equal(ep.ejectedUntil, 1020, "the capped attempt did not lengthen the real ejection");
  });

  it("skips an endpoint that answered 429/503 for its Retry-After, without counting a failure", () => {
    const ep = endpoint({ ejection: policy, circuit });
    ep.health.recordHealth(true, 0, null, 2, 1);
    ep.health.reportBackpressure(2000, 100);
    assert.equal(ep.routable(1000), false);
    assert.match(ep.health.unavailableWhy(1000) ?? "", /backing off for 1100 ms/);
    assert.equal(ep.routable(2100), true);
    assert.equal(ep.health.outliers.consecutiveFailures, 0);
  });
});

describe("EndpointState: the circuit breaker's probe", () => {
  it("a half-open probe answered 429/503 frees the probe slot: the next probe may go after the back-off", () => {
    const ep = endpoint({ circuit: { minRequests: 2, failureRatio: 0.5, openMs: 100, maxOpenMs: 100 } });
    ep.health.recordHealth(true, 0, null, 2, 1);
    ep.health.reportFailure(500, 10);
    ep.health.reportFailure(500, 11);
    assert.equal(ep.health.breaker.state, "open");
    const probe = ep.acquire(10, undefined, 200);
    assert.equal(ep.health.breaker.state, "half_open");
    assert.equal(ep.routable(200), false, "one probe at a time");
    probe.release(210);
    ep.health.reportBackpressure(100, 210);
    assert.equal(ep.routable(300), false, "still backing off");
    assert.equal(ep.routable(320), true, "another probe may go");
    assert.equal(ep.health.breaker.state, "half_open");
  });
});

describe("EndpointState: health", () => {
  it("starts unknown and not routable, then follows the thresholds and reports only changes", () => {
    const ep = endpoint();
    assert.equal(ep.healthy, false);
    assert.equal(ep.health.status, "unknown");
    assert.equal(ep.health.recordHealth(true, 1, null, 2, 1), "healthy");
    assert.equal(ep.routable(1), true);
    assert.equal(ep.health.recordHealth(true, 2, null, 2, 1), null);
    assert.equal(ep.health.recordHealth(false, 3, "HTTP 503", 2, 1), null);
    assert.equal(ep.healthy, true, "one failure is below the threshold");
    assert.equal(ep.health.recordHealth(false, 4, "HTTP 503", 2, 1), "unhealthy");
    assert.equal(ep.health.recordHealth(false, 5, "HTTP 503", 2, 1), null);
    assert.equal(ep.health.consecutiveFailures, 3);
    assert.equal(ep.health.lastHealthError, "HTTP 503");
    assert.equal(ep.health.recordHealth(true, 6, null, 2, 2), null, "healthy threshold 2 needs two passes");
    assert.equal(ep.health.recordHealth(true, 7, null, 2, 2), "healthy");
    assert.equal(ep.health.lastHealthAt, 7);
  });

  it("a draining endpoint is not routable", () => {
    const ep = endpoint();
    ep.health.recordHealth(true, 0, null, 2, 1);
    ep.draining = true;
    assert.equal(ep.routable(0), false);
  });
});

describe("EndpointState: metric freshness", () => {
  it("defaults the bound to 4 × the scrape interval, at least 200 ms", () => {
    assert.deepEqual(metricsStalenessBound(250), { ms: 1000, warning: null });
    assert.deepEqual(metricsStalenessBound(20), { ms: 200, warning: null });
    assert.equal(endpoint().metricsStalenessMs, 1000);
  });

  it("warns when a configured bound is under twice the interval", () => {
    const tight = metricsStalenessBound(1000, 1500);
    assert.equal(tight.ms, 1500);
    assert.match(tight.warning ?? "", /1500 ms is under twice the scrape interval \(1000 ms\)/);
    assert.equal(metricsStalenessBound(1000, 2000).warning, null);
    assert.ok(endpoint({ metricsStalenessMs: 300 }).scrape.stalenessWarning);
  });

  it("is fresh from a successful scrape until the bound passes; a failed scrape changes no values", () => {
    const ep = endpoint();
    assert.equal(ep.metricsFresh(0), false);
    ep.recordScrape(reading(), 1000, 3);
    assert.equal(ep.metricsFresh(2000), true);
    assert.equal(ep.metricsFresh(2001), false);
    ep.scrape.recordError("timeout: no answer within 250 ms", 250);
    assert.equal(ep.scrape.scrapeErrors, 1);
    assert.equal(ep.waiting, 1);
    assert.equal(ep.scrapedAt, 1000);
    assert.equal(ep.scrape.lastScrapeError, "timeout: no answer within 250 ms");
  });
});

describe("EndpointState: rates between scrapes", () => {
  it("prefix-cache hit rate is the change in hits over the change in queries", () => {
    const ep = endpoint();
    ep.recordScrape(reading({ prefixHits: 100, prefixQueries: 1000 }), 0, 1);
    assert.equal(ep.scrape.prefixCacheHitRate, null, "one scrape has no window");
    ep.recordScrape(reading({ prefixHits: 175, prefixQueries: 1100 }), 250, 1);
    assert.equal(ep.scrape.prefixCacheHitRate, 0.75);
    ep.recordScrape(reading({ prefixHits: 175, prefixQueries: 1100 }), 500, 1);
    assert.equal(ep.scrape.prefixCacheHitRate, null, "no queries in the window");
    // The engine restarted: counters went down, so what it shows now is the window.
    ep.recordScrape(reading({ prefixHits: 10, prefixQueries: 40 }), 750, 1);
    assert.equal(ep.scrape.prefixCacheHitRate, 0.25);
  });

  it("uses the engine's own hit-rate gauge only when the counters are missing", () => {
    const ep = endpoint({ dialect: "sglang" });
    ep.recordScrape(reading({ prefixHitRateGauge: 0.4 }), 0, 1);
    assert.equal(ep.scrape.prefixCacheHitRate, 0.4);
  });

  it("TTFT p95 comes from the histogram's change between scrapes", () => {
    const ep = endpoint();
    const buckets = (a: number, b: number, c: number) => [
      { le: 0.1, count: a },
      { le: 1, count: b },
      { le: INF, count: c },
    ];
    ep.recordScrape(reading({ ttftBuckets: buckets(1000, 1000, 1000) }), 0, 1);
    assert.equal(ep.scrape.ttftP95Seconds, null);
    // 100 new requests, all between 0.1 s and 1 s: the old 1000 fast ones must not pull p95 down.
    ep.recordScrape(reading({ ttftBuckets: buckets(1000, 1100, 1100) }), 250, 1);
    assert.ok(Math.abs(ep.scrape.ttftP95Seconds! - 0.955) < 1e-9, String(ep.scrape.ttftP95Seconds));
    assert.equal(ep.scrape.ttftWindowCount, 100);
    ep.recordScrape(reading({ ttftBuckets: buckets(1000, 1100, 1100) }), 500, 1);
    assert.equal(ep.scrape.ttftP95Seconds, null, "nothing finished in the window");
    assert.equal(ep.scrape.ttftWindowCount, 0);
  });
});

describe("EndpointState: snapshot", () => {
  it("is plain JSON with health, ejection, in-flight and metrics", () => {
    const ep = endpoint();
    ep.health.recordHealth(true, 0, null, 2, 1);
    ep.recordScrape(reading({ loras: { max: 2, running: ["a"], waiting: [] } }), 1_000, 4);
    const lease = ep.acquire(50);
    const snap = snapshotOf(ep, 1_500);
    assert.deepEqual(JSON.parse(JSON.stringify(snap)), snap);
    assert.equal(snap.routable, true);
    assert.equal(snap.health.status, "healthy");
    assert.deepEqual(snap.inflight, { requests: 1, tokens: 50 });
    assert.equal(snap.metrics.fresh, true);
    assert.equal(snap.metrics.ageMs, 500);
    assert.equal(snap.metrics.scrapedAt, new Date(1000).toISOString());
    assert.deepEqual(snap.metrics.loras, { max: 2, running: ["a"], waiting: [] });
    assert.equal(snap.ejection.ejected, false);
    lease.release();
  });

  it("flags an engine that serves another version than its pool expects (a runtime rollback shows)", () => {
    const ep = endpoint({
      model: "m",
      modelVersion: "m-2026-06-15",
      models: { ...DEFAULT_MODELS_POLL, versionFrom: "root" },
    });
    assert.equal(snapshotOf(ep, 0).served.versionMismatch, false, "nothing read yet");
    ep.modelVersion = "m-2026-05-01";
    const snap = snapshotOf(ep, 0);
    assert.equal(snap.served.versionMismatch, true);
    assert.equal(snap.served.expectedVersion, "m-2026-06-15");
  });
});

describe("EndpointState.forPool", () => {
  it("makes one state per endpoint with the pool's dialect and intervals", () => {
    const states = EndpointState.forPool({
      name: "batch",
      engine: "sglang",
      model: "m",
      modelVersion: "m",
      flowControl: DEFAULT_POOL_FLOW,
      loraAdapters: [],
      upstreamAuth: null,
      discovery: null,
      models: DEFAULT_MODELS_POLL,
      outlierDetection: DEFAULT_OUTLIER_DETECTION,
      circuitBreaker: DEFAULT_CIRCUIT_BREAKER,
      endpoints: [
        { name: "b0", url: "http://127.0.0.1:9001", modelVersion: null },
        { name: "b1", url: "http://127.0.0.1:9002", modelVersion: null },
      ],
      metrics: { path: "/metrics", intervalMs: 100 },
      health: { path: "/health", intervalMs: 500 },
    });
    assert.deepEqual(
      states.map((s) => [s.pool, s.name, s.url, s.dialect, s.metricsIntervalMs, s.healthIntervalMs]),
      [
        ["batch", "b0", "http://127.0.0.1:9001", "sglang", 100, 500],
        ["batch", "b1", "http://127.0.0.1:9002", "sglang", 100, 500],
      ],
    );
    assert.equal(states[0]!.metricsStalenessMs, 400);
  });
});
