// Pins one pick end to end and its degradation order: fresh metrics → predicted from the gateway's own
// accounting → power of two choices → backup pool or a clear failure; plus the load guard and herding.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type FakeEndpoint, fakeEndpoint, pickRequest, seededRandom } from "../../testing/fake-endpoint.js";
import { DEFAULT_SCORERS, parseEndpointPickerConfig } from "../config/endpoint-picker-config.js";
import { buildPickerProfile } from "../picker-profile.js";
import { PrefixIndex } from "../prefix-index/prefix-index.js";
import { pickEndpoint } from "./pick-endpoint.js";
import type { PickContext, PickRequest } from "./types.js";

function profile(spec: Record<string, unknown> = {}) {
  const parsed = parseEndpointPickerConfig(spec);
  assert.ok(parsed.ok, JSON.stringify(!parsed.ok && parsed.errors));
  return buildPickerProfile(parsed.config);
}

const pool = (n: number, over: Partial<FakeEndpoint> = {}) =>
  Array.from({ length: n }, (_, i) => fakeEndpoint(`e${i}`, over));
const ctx = (request: Partial<PickRequest> = {}, extra: Partial<PickContext> = {}): PickContext => ({
  request: pickRequest(request),
  now: 1000,
  random: seededRandom(5),
  ...extra,
});
const hashes = Array.from({ length: 60 }, (_, i) => 1000 + i);

describe("pickEndpoint with fresh metrics", () => {
  it("runs in mode metrics and explains the top scores", () => {
    const eps = [fakeEndpoint("short", { waiting: 0 }), fakeEndpoint("long", { waiting: 9, kvUsage: 0.8 })];
    const r = pickEndpoint(profile(), ctx(), eps);
    assert.equal(r.endpoint?.name, "short");
    assert.equal(r.mode, "metrics");
    assert.equal(r.topScores[0]!.endpoint, "short");
    assert.ok(r.topScores[0]!.total > r.topScores[1]!.total);
    assert.deepEqual(Object.keys(r.topScores[0]!.perScorer), [
      "prefix-affinity",
      "predicted-delay",
      "inflight-tokens",
      "kv-cache",
      "lora-affinity",
    ]);
  });

  it("lists every filtered endpoint with the filter and why", () => {
    const eps = [
      fakeEndpoint("a"),
      fakeEndpoint("b", { healthy: false }),
      fakeEndpoint("c", { kvUsage: 0.99 }),
    ];
    const r = pickEndpoint(profile(), ctx(), eps);
    assert.equal(r.endpoint?.name, "a");
    assert.deepEqual(r.filtered, [
      { endpoint: "b", filter: "ready", why: "not healthy" },
      { endpoint: "c", filter: "kv-watermark", why: "KV use 0.99 >= watermark 0.95" },
    ]);
  });

  it("follows the prefix index to the endpoint holding the prompt", () => {
    const index = new PrefixIndex();
    index.record("e2", hashes);
    const r = pickEndpoint(profile(), ctx({ blockHashes: hashes }, { prefixIndex: index }), pool(4));
    assert.equal(r.endpoint?.name, "e2");
    const weight = DEFAULT_SCORERS.find((s) => s.type === "prefix-affinity")!.weight;
    assert.equal(
      r.topScores[0]!.perScorer["prefix-affinity"],
      weight,
      "a full match scores the whole weight",
    );
  });
});

describe("pickEndpoint degradation order", () => {
  it("uses the gateway's own accounting when any candidate's metrics are stale (mode predicted)", () => {
    // b's stale scrape says an empty queue; the gateway knows it sent b 6 requests.
    const eps = [
      fakeEndpoint("a", { fresh: false, waiting: 30, inflightRequests: 1 }),
      fakeEndpoint("b", { fresh: false, waiting: 0, inflightRequests: 6, inflightTokens: 6000 }),
    ];
    const r = pickEndpoint(profile(), ctx(), eps);
    assert.equal(r.mode, "predicted");
    assert.equal(r.endpoint?.name, "a");
    assert.match(r.notes.join(), /no endpoint has fresh metrics/);
  });

  it("prefers fresh endpoints over stale ones when some are fresh", () => {
    const eps = [fakeEndpoint("stale", { fresh: false }), fakeEndpoint("fresh", { waiting: 5 })];
    const r = pickEndpoint(profile(), ctx(), eps);
    assert.equal(r.endpoint?.name, "fresh");
    assert.equal(r.mode, "metrics");
    assert.deepEqual(r.filtered, [{ endpoint: "stale", filter: "metrics-fresh", why: "metrics stale" }]);
  });

  it("falls to power of two choices when the scores carry no signal", () => {
    const eps = pool(4, { fresh: false });
    eps[1]!.inflightTokens = 0;
    const r = pickEndpoint(profile({ scorers: [{ type: "queue-depth" }] }), ctx(), eps);
    assert.equal(r.mode, "p2c");
    assert.match(r.reason, /no signal/);
  });

  it("fails open with a note when a filter would remove every endpoint", () => {
    const eps = pool(3, { kvUsage: 0.99 });
    const r = pickEndpoint(profile(), ctx(), eps);
    assert.ok(r.endpoint);
    assert.equal(r.filtered.length, 0);
    assert.match(r.notes.join(), /filter kv-watermark would remove all 3 endpoints .*fail-open keeps them/);
  });

  it("fails fast with a clear reason when a fail-closed filter removes every endpoint", () => {
    const r = pickEndpoint(profile(), ctx(), pool(2, { healthy: false }));
    assert.equal(r.endpoint, null);
    assert.equal(r.mode, "no_endpoint");
    assert.match(r.reason, /filter ready removed every remaining endpoint \(e\.g\. e0: not healthy\)/);
    assert.equal(r.filtered.length, 2);
  });

  it("fails closed for every filter when failOpen is false", () => {
    const r = pickEndpoint(profile({ failOpen: false }), ctx(), pool(2, { kvUsage: 0.99 }));
    assert.equal(r.mode, "no_endpoint");
  });

  it("names the backup pool when nothing is left", () => {
    const r = pickEndpoint(profile({ backupPool: "spillover" }), ctx(), pool(2, { draining: true }));
    assert.equal(r.endpoint, null);
    assert.equal(r.mode, "backup_pool");
    assert.equal(r.backupPool, "spillover");
    assert.match(r.reason, /backup pool spillover/);
  });

  it("fails fast on an empty pool", () => {
    const r = pickEndpoint(profile(), ctx(), []);
    assert.deepEqual([r.endpoint, r.mode, r.reason], [null, "no_endpoint", "pool has no endpoints"]);
  });
});

describe("pickEndpoint load guard", () => {
  it("yields cache affinity when the cached endpoint's predicted delay exceeds the best by the margin", () => {
    const index = new PrefixIndex();
    index.record("hot", hashes);
    const eps = [fakeEndpoint("hot", { waiting: 20 }), fakeEndpoint("idle")];
    // hot: 20 × 100 ms queued, prompt cached; idle: 960 uncached tokens × 0.1 ms = 96 ms.
    const r = pickEndpoint(
      profile(),
      ctx({ blockHashes: hashes, inputTokens: 960 }, { prefixIndex: index }),
      eps,
    );
    assert.equal(r.endpoint?.name, "idle");
    assert.equal(r.mode, "affinity_yielded");
    // The margin is what the cache saves here: 960 tokens × 0.1 ms, under the configured 500 ms.
    assert.match(r.reason, /hot predicted 2000 ms vs idle 96 ms \(margin 96 ms\)/);
  });

  it("yields once the cached endpoint's extra queue costs more than its cache saves, within the configured margin", () => {
    const index = new PrefixIndex();
    index.record("warm", hashes);
    // warm: 3 × 100 ms queued, the prompt cached; idle: 96 ms of prefill. 300 − 96 > the 96 ms it saves.
    const eps = [fakeEndpoint("warm", { waiting: 3 }), fakeEndpoint("idle")];
    const r = pickEndpoint(
      profile(),
      ctx({ blockHashes: hashes, inputTokens: 960 }, { prefixIndex: index }),
      eps,
    );
    assert.equal(r.endpoint?.name, "idle");
    assert.equal(r.mode, "affinity_yielded");
  });

  it("keeps affinity while the cached endpoint is within what its cache saves", () => {
    const index = new PrefixIndex();
    index.record("warm", hashes);
    const eps = [fakeEndpoint("warm", { waiting: 1 }), fakeEndpoint("idle")];
    const r = pickEndpoint(
      profile(),
      ctx({ blockHashes: hashes, inputTokens: 960 }, { prefixIndex: index }),
      eps,
    );
    assert.equal(r.endpoint?.name, "warm");
    assert.equal(r.mode, "metrics");
  });

  it("does not claim to yield affinity when every candidate holds the prompt", () => {
    const index = new PrefixIndex();
    index.record("a", hashes);
    index.record("b", hashes);
    const eps = [fakeEndpoint("a", { waiting: 20 }), fakeEndpoint("b")];
    const r = pickEndpoint(
      profile(),
      ctx({ blockHashes: hashes, inputTokens: 960 }, { prefixIndex: index }),
      eps,
    );
    assert.equal(r.endpoint?.name, "b");
    assert.equal(r.mode, "metrics");
  });

  it("keeps an adapter where it runs over an idle engine that would load it, within the margin", () => {
    const loras = (running: string[]) => ({ max: 2, running, waiting: [] });
    const eps = [
      fakeEndpoint("resident", { waiting: 3, running: 8, inflightRequests: 11, loras: loras(["x"]) }),
      fakeEndpoint("idle", { loras: loras(["y"]) }),
    ];
    const r = pickEndpoint(profile(), ctx({ lora: "x" }), eps);
    assert.equal(r.endpoint?.name, "resident");
    assert.equal(r.mode, "metrics");
  });

  it("spreads an adapter once its engine queues longer than the margin", () => {
    const loras = (running: string[]) => ({ max: 2, running, waiting: [] });
    const eps = [
      fakeEndpoint("resident", { waiting: 8, loras: loras(["x"]) }),
      fakeEndpoint("idle", { loras: loras(["y"]) }),
    ];
    const r = pickEndpoint(profile(), ctx({ lora: "x" }), eps);
    assert.equal(r.endpoint?.name, "idle");
    assert.equal(r.mode, "affinity_yielded");
  });

  it("is off with loadGuard: false", () => {
    const index = new PrefixIndex();
    index.record("hot", hashes);
    const eps = [fakeEndpoint("hot", { waiting: 20 }), fakeEndpoint("idle")];
    const p = profile({ loadGuard: false, scorers: [{ type: "prefix-affinity" }] });
    const r = pickEndpoint(p, ctx({ blockHashes: hashes, inputTokens: 960 }, { prefixIndex: index }), eps);
    assert.equal(r.endpoint?.name, "hot");
  });
});

describe("pickEndpoint under a burst", () => {
  it("spreads a burst of one shared prefix once the caller counts each pick before the next", () => {
    const index = new PrefixIndex();
    const eps = pool(4);
    const p = profile();
    const counts = new Map<string, number>();
    for (let i = 0; i < 40; i++) {
      const r = pickEndpoint(p, ctx({ blockHashes: hashes, inputTokens: 960 }, { prefixIndex: index }), eps);
      const e = r.endpoint!;
      e.inflightRequests++;
      e.inflightTokens += 1060;
      index.record(e.name, hashes);
      counts.set(e.name, (counts.get(e.name) ?? 0) + 1);
    }
    // Scrapes would lag; the gateway's own counts alone must keep the hot endpoint bounded.
    const max = Math.max(...counts.values());
    assert.ok(max < 40, `all 40 went to one endpoint: ${JSON.stringify([...counts])}`);
    assert.ok(counts.size >= 2);
  });

  it("does not herd a burst onto the one endpoint whose scrape came in on time", () => {
    // Three scrapes 600 ms late (stale, within the grace): the pick runs on the gateway's own counts
    // for all four rather than sending the whole burst to e0, the only fresh one.
    const index = new PrefixIndex();
    const eps = pool(4, { fresh: false, scrapedAt: 400 });
    eps[0]!.fresh = true;
    eps[0]!.scrapedAt = 1000;
    const p = profile();
    const counts = new Map<string, number>();
    let predicted = 0;
    for (let i = 0; i < 40; i++) {
      const h = Array.from({ length: 60 }, (_, k) => (i + 1) * 10_000 + k);
      const r = pickEndpoint(p, ctx({ blockHashes: h, inputTokens: 960 }, { prefixIndex: index }), eps);
      if (r.signals === "predicted") predicted++;
      const e = r.endpoint!;
      e.inflightRequests++;
      e.inflightTokens += 1060;
      index.record(e.name, h);
      counts.set(e.name, (counts.get(e.name) ?? 0) + 1);
    }
    assert.equal(predicted, 40);
    assert.ok(Math.max(...counts.values()) <= 12, JSON.stringify([...counts]));
  });

  it("keeps working with the index at its budget and after an endpoint leaves the pool", () => {
    const index = new PrefixIndex({ maxBlocks: 100 });
    const eps = pool(3);
    const p = profile();
    for (let i = 0; i < 50; i++) {
      const h = Array.from({ length: 30 }, (_, k) => i * 1000 + k);
      const r = pickEndpoint(p, ctx({ blockHashes: h }, { prefixIndex: index }), eps);
      index.record(r.endpoint!.name, h);
      assert.ok(index.size <= 100);
    }
    index.record("e1", hashes.slice(0, 30));
    index.removeEndpoint("e1");
    const left = eps.filter((e) => e.name !== "e1");
    const r = pickEndpoint(p, ctx({ blockHashes: hashes }, { prefixIndex: index }), left);
    assert.notEqual(r.endpoint?.name, "e1");
    assert.equal(index.match(hashes).has("e1"), false);
  });
});
