import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  crashRecovery,
  type EndState,
  growthPercent,
  memoryAt,
  rssSlopeMibPerHour,
  soakTargets,
} from "./soak-figures.js";
import type { GatewaySample } from "./soak-watch.js";

const clean: EndState = {
  settle_ms: 5000,
  inflight_metric: 0,
  inflight_by_endpoint: { a: 0, b: 0 },
  queued_metric: 0,
  fds: 40,
  fd_kinds: null,
  fds_before_load: 12,
  fds_after_idle: null,
  idle_wait_s: null,
};

function sample(t_s: number, rss: number | null, heap: number | null = null): GatewaySample {
  return {
    t_s,
    rss_mib: rss,
    heap_used_mib: heap,
    heap_total_mib: null,
    external_mib: null,
    metric_rss_mib: null,
    metric_heap_used_mib: null,
    fds: 10,
    loop_p99_ms: null,
    loop_max_ms: null,
    inflight: null,
    queued: null,
  };
}

describe("soak targets", () => {
  it("all met", () => {
    const t = soakTargets({ rssGrowthPercent: 4, end: clean, failedWhileHealthy: 0 });
    assert.deepEqual(
      t.map((x) => x.met),
      [true, true, true],
    );
  });

  it("10% growth is not under 10%; one failure or one leaked lease fails its target", () => {
    assert.equal(soakTargets({ rssGrowthPercent: 10, end: clean, failedWhileHealthy: 0 })[0]!.met, false);
    assert.equal(soakTargets({ rssGrowthPercent: 9.9, end: clean, failedWhileHealthy: 0 })[0]!.met, true);
    assert.equal(soakTargets({ rssGrowthPercent: 1, end: clean, failedWhileHealthy: 1 })[2]!.met, false);
    const leaked = { ...clean, inflight_by_endpoint: { a: 0, b: 1 } };
    assert.equal(soakTargets({ rssGrowthPercent: 1, end: leaked, failedWhileHealthy: 0 })[1]!.met, false);
    const queued = { ...clean, queued_metric: 2 };
    assert.equal(soakTargets({ rssGrowthPercent: 1, end: queued, failedWhileHealthy: 0 })[1]!.met, false);
  });

  it("what was not measured is not met or failed", () => {
    const unread = { ...clean, inflight_metric: null, inflight_by_endpoint: null, queued_metric: null };
    const t = soakTargets({ rssGrowthPercent: null, end: unread, failedWhileHealthy: 0 });
    assert.equal(t[0]!.met, null);
    assert.equal(t[1]!.met, null);
    // Partly read: not judged met on a part, but a count above 0 in the part read fails it.
    const partly = { ...clean, inflight_by_endpoint: null };
    assert.equal(soakTargets({ rssGrowthPercent: 1, end: partly, failedWhileHealthy: 0 })[1]!.met, null);
    const partlyHeld = { ...partly, queued_metric: 1 };
    assert.equal(soakTargets({ rssGrowthPercent: 1, end: partlyHeld, failedWhileHealthy: 0 })[1]!.met, false);
  });
});

describe("soak memory figures", () => {
  it("takes medians within a window, growth in percent and a slope per hour", () => {
    const s = [sample(0, 100), sample(5, 110, 20), sample(10, 90, 22), sample(15, 130, 24), sample(20, 200)];
    const w = memoryAt(s, 5, 15);
    assert.equal(w.samples, 3);
    assert.equal(w.rss_mib, 110);
    assert.equal(w.heap_used_mib, 22);
    assert.equal(memoryAt(s, 100, 200).rss_mib, null);
    assert.equal(growthPercent(100, 104.44), 4.4);
    assert.equal(growthPercent(null, 5), null);
    const line = [0, 10, 20, 30].map((t) => sample(t, 100 + t / 10));
    assert.equal(rssSlopeMibPerHour(line, 0, 30), 360);
    assert.equal(rssSlopeMibPerHour(line.slice(0, 2), 0, 30), null);
  });
});

describe("soak crash recovery", () => {
  it("finds when the gateway took the endpoint out after the crash and when it let it back", () => {
    const changes = [
      { atMs: 1000, endpoint: "a", routable: true, why: null },
      { atMs: 30_200, endpoint: "b", routable: false, why: "not healthy" },
      { atMs: 30_300, endpoint: "a", routable: false, why: "ejected for 29900 ms" },
      { atMs: 60_400, endpoint: "a", routable: true, why: null },
      { atMs: 90_000, endpoint: "a", routable: false, why: "not healthy" },
    ];
    assert.deepEqual(crashRecovery({ endpoint: "a", atMs: 30_000, until: 80_000 }, changes), {
      gateway_out_at_s: 30.3,
      gateway_back_at_s: 60.4,
      gateway_why: ["ejected for … ms"],
    });
    assert.deepEqual(crashRecovery({ endpoint: "c", atMs: 0, until: 1e9 }, changes), {
      gateway_out_at_s: null,
      gateway_back_at_s: null,
      gateway_why: [],
    });
  });
});
