// Pins each hard filter: what it removes, the reason it gives, and what it deliberately keeps.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { fakeEndpoint, pickRequest } from "../../testing/fake-endpoint.js";
import type { Filter, PickContext } from "../framework/types.js";
import {
  concurrencyCapFilter,
  kvWatermarkFilter,
  loraAvailableFilter,
  metricsFreshFilter,
  notDrainingFilter,
  readyFilter,
  servesModelFilter,
} from "./endpoint-filters.js";

const ctx = (over: Partial<PickContext["request"]> = {}): PickContext => ({
  request: pickRequest(over),
  now: 1000,
});
const names = (f: Filter, c: PickContext, eps: ReturnType<typeof fakeEndpoint>[]) => {
  const out = f.filter(c, eps);
  return {
    kept: out.kept.map((e) => e.name),
    removed: out.removed.map((r) => `${r.endpoint.name}: ${r.why}`),
  };
};

describe("filters", () => {
  it("ready removes unhealthy endpoints", () => {
    const r = names(readyFilter(), ctx(), [fakeEndpoint("a"), fakeEndpoint("b", { healthy: false })]);
    assert.deepEqual(r, { kept: ["a"], removed: ["b: not healthy"] });
  });

  it("not-draining removes draining and currently ejected endpoints, keeps an expired ejection", () => {
    const eps = [
      fakeEndpoint("a", { draining: true }),
      fakeEndpoint("b", { ejectedUntil: 1500 }),
      fakeEndpoint("c", { ejectedUntil: 900 }),
    ];
    assert.deepEqual(names(notDrainingFilter(), ctx(), eps), {
      kept: ["c"],
      removed: ["a: draining", "b: ejected for 500 ms"],
    });
  });

  it("serves-model checks declared model and version, and keeps undeclared ones", () => {
    const eps = [
      fakeEndpoint("a", { model: "m", modelVersion: "v1" }),
      fakeEndpoint("b", { model: "m", modelVersion: "v2" }),
      fakeEndpoint("c", { model: "other" }),
      fakeEndpoint("d"),
    ];
    assert.deepEqual(names(servesModelFilter(), ctx({ modelVersion: "v1" }), eps).kept, ["a", "d"]);
    assert.deepEqual(names(servesModelFilter(), ctx(), eps).kept, ["a", "b", "d"]);
  });

  it("lora-available keeps engines that run the adapter or have a slot for it, not a queue behind full slots", () => {
    const record = (active: string[]) => ({
      likelyResident: () => false,
      active: () => active.values(),
      isActive: (a: string) => active.includes(a),
    });
    const eps = [
      fakeEndpoint("running", { loras: { max: 2, running: ["x", "y"], waiting: [] } }),
      fakeEndpoint("queued", { loras: { max: 2, running: ["y", "z"], waiting: ["x"] } }),
      fakeEndpoint("free-slot", { loras: { max: 2, running: ["y"], waiting: [] } }),
      fakeEndpoint("full", { loras: { max: 2, running: ["y", "z"], waiting: [] } }),
      // The scrape shows a free slot, but the gateway has just sent another adapter there.
      fakeEndpoint("taken-since", {
        loras: { max: 2, running: ["y"], waiting: [] },
        adapterRecord: record(["w"]),
      }),
      // The scrape shows it full, but one of the two is the gateway's own x, just sent.
      fakeEndpoint("sent-since", {
        loras: { max: 2, running: ["y", "z"], waiting: [] },
        adapterRecord: record(["x"]),
      }),
      fakeEndpoint("unknown"),
    ];
    const r = names(loraAvailableFilter(), ctx({ lora: "x" }), eps);
    assert.deepEqual(r.kept, ["running", "free-slot", "sent-since", "unknown"]);
    assert.deepEqual(r.removed, [
      "queued: adapter x not running and all 2 adapter slots busy with running adapters",
      "full: adapter x not running and all 2 adapter slots busy with running adapters",
      "taken-since: adapter x not running and all 2 adapter slots busy with running adapters",
    ]);
    assert.equal(names(loraAvailableFilter(), ctx(), eps).kept.length, 7);
  });

  it("kv-watermark removes fresh readings at or over the threshold only", () => {
    const eps = [
      fakeEndpoint("a", { kvUsage: 0.95 }),
      fakeEndpoint("b", { kvUsage: 0.5 }),
      fakeEndpoint("stale", { kvUsage: 0.99, fresh: false }),
    ];
    const r = names(kvWatermarkFilter(0.9), ctx(), eps);
    assert.deepEqual(r, { kept: ["b", "stale"], removed: ["a: KV use 0.95 >= watermark 0.9"] });
  });

  it("concurrency-cap removes endpoints at the cap", () => {
    const eps = [fakeEndpoint("a", { inflightRequests: 8 }), fakeEndpoint("b", { inflightRequests: 7 })];
    assert.deepEqual(names(concurrencyCapFilter(8), ctx(), eps), {
      kept: ["b"],
      removed: ["a: 8 in flight >= cap 8"],
    });
  });

  it("metrics-fresh require removes stale endpoints even when none is left", () => {
    const eps = [fakeEndpoint("a", { fresh: false }), fakeEndpoint("b", { fresh: false })];
    assert.deepEqual(names(metricsFreshFilter("require"), ctx(), eps).kept, []);
  });

  it("metrics-fresh prefer drops stale endpoints while a fresh one exists, else keeps all with a note", () => {
    const mixed = [fakeEndpoint("a", { fresh: false }), fakeEndpoint("b")];
    assert.deepEqual(names(metricsFreshFilter("prefer"), ctx(), mixed).kept, ["b"]);
    const stale = [fakeEndpoint("a", { fresh: false }), fakeEndpoint("b", { fresh: false })];
    const out = metricsFreshFilter("prefer").filter(ctx(), stale);
    assert.equal(out.kept.length, 2);
    assert.match(out.note ?? "", /no endpoint has fresh metrics/);
  });

  it("metrics-fresh prefer keeps an endpoint whose scrape is late by less than the grace", () => {
    // now = 1000: a scraped 600 ms ago (stale, within the 2 s grace), b fresh, c 3 s ago, d never.
    const eps = [
      fakeEndpoint("a", { fresh: false, scrapedAt: 400 }),
      fakeEndpoint("b"),
      fakeEndpoint("c", { fresh: false, scrapedAt: -2000 }),
      fakeEndpoint("d", { fresh: false, scrapedAt: null }),
    ];
    assert.deepEqual(names(metricsFreshFilter("prefer"), ctx(), eps), {
      kept: ["a", "b"],
      removed: ["c: metrics stale for 3000 ms > grace 2000 ms", "d: no metrics yet"],
    });
    assert.deepEqual(names(metricsFreshFilter("prefer", undefined, 500), ctx(), eps).kept, ["b"]);
    assert.deepEqual(names(metricsFreshFilter("require"), ctx(), eps).kept, ["b"]);
  });
});
