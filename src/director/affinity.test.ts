import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  EU_CENTRAL,
  EU_WEST,
  query,
  REGIONS,
  summary,
  testConfig,
  US_EAST,
} from "../testing/director-core-fixtures.js";
import { AffinityTable } from "./affinity.js";
import { RegionDirectorCore } from "./director-core.js";
import type { DirectorDecision } from "./director-types.js";

const T0 = 1_700_000_000_000;

function pick(d: DirectorDecision): [string, string, string | null] {
  assert.equal(d.kind, "region");
  return d.kind === "region" ? [d.region, d.reason, d.affinity] : ["", "", null];
}

function polled(core: RegionDirectorCore, now: number, westHeadroom = 0.8): void {
  for (const r of REGIONS)
    core.observeSummary(summary(r, now, r === EU_WEST ? { headroom: westHeadroom } : {}), now);
}

describe("session affinity", () => {
  it("keeps a session on its region while it passes, even once other traffic has moved", () => {
    const core = new RegionDirectorCore(testConfig());
    polled(core, T0);
    assert.deepEqual(pick(core.decide(query({ session: "s1" }), T0)), [EU_WEST, "home", "new"]);
    // eu-west loses headroom (0.1, still > 0): traffic without a session moves after the dwell.
    for (let t = 1_000; t <= 40_000; t += 1_000) polled(core, T0 + t, 0.1);
    assert.deepEqual(pick(core.decide(query(), T0 + 40_000)), [EU_CENTRAL, "home", null]);
    assert.deepEqual(pick(core.decide(query({ session: "s1" }), T0 + 40_000)), [EU_WEST, "home", "kept"]);
    assert.deepEqual(pick(core.decide(query({ session: "s2" }), T0 + 40_000)), [EU_CENTRAL, "home", "new"]);
  });

  it("breaks at once when the session's region fails, and keeps the new one", () => {
    const core = new RegionDirectorCore(testConfig());
    polled(core, T0);
    core.decide(query({ session: "s1" }), T0);
    core.observeSummary(summary(EU_WEST, T0 + 1_000, { draining: true }), T0 + 1_000);
    assert.deepEqual(pick(core.decide(query({ session: "s1" }), T0 + 1_000)), [
      EU_CENTRAL,
      "failover",
      "broken",
    ]);
    core.observeSummary(summary(EU_WEST, T0 + 2_000), T0 + 2_000);
    assert.deepEqual(pick(core.decide(query({ session: "s1" }), T0 + 2_000)), [EU_CENTRAL, "home", "kept"]);
  });

  it("holds for ttlMs from the first send, not refreshed by use, then follows the stream's home", () => {
    const core = new RegionDirectorCore(testConfig({ affinity: { header: "x-session-id", ttlMs: 10_000 } }));
    polled(core, T0);
    core.decide(query({ session: "s1", callerRegion: US_EAST }), T0);
    polled(core, T0 + 4_000);
    // Asked from elsewhere, the session still goes where it went, until the TTL from its first send.
    assert.deepEqual(pick(core.decide(query({ session: "s1" }), T0 + 8_000)), [US_EAST, "home", "kept"]);
    polled(core, T0 + 9_000);
    assert.deepEqual(pick(core.decide(query({ session: "s1" }), T0 + 9_999)), [US_EAST, "home", "kept"]);
    polled(core, T0 + 10_000);
    assert.deepEqual(pick(core.decide(query({ session: "s1" }), T0 + 10_000)), [EU_WEST, "home", "new"]);
  });

  it("reports compliance for a one-region tenant's sessions, new and kept", () => {
    const core = new RegionDirectorCore(testConfig());
    polled(core, T0);
    const d = core.decide(query({ tenant: "bank", session: "b1", callerRegion: US_EAST }), T0);
    assert.deepEqual(pick(d), [EU_WEST, "compliance", "new"]);
    const again = core.decide(query({ tenant: "bank", session: "b1", callerRegion: US_EAST }), T0 + 1);
    assert.deepEqual(pick(again), [EU_WEST, "compliance", "kept"]);
  });

  it("table: lookups ignore expired entries, writes refresh them", () => {
    const t = new AffinityTable(100);
    const k = AffinityTable.key("s", "m");
    assert.equal(t.lookup(k, 0), null);
    t.write(k, "a", 0);
    assert.equal(t.lookup(k, 99), "a");
    assert.equal(t.lookup(k, 100), null);
    t.write(k, "b", 100);
    assert.equal(t.lookup(k, 150), "b");
    assert.notEqual(AffinityTable.key("s", "m2"), k);
  });

  it("table: beyond its bound, drops the least recently used session", () => {
    const t = new AffinityTable(1_000, 2);
    t.write("a", "r1", 0);
    t.write("b", "r1", 1);
    t.write("a", "r2", 2); // refreshed: b is now the oldest
    t.write("c", "r1", 3);
    assert.deepEqual([t.lookup("a", 4), t.lookup("b", 4), t.lookup("c", 4), t.size], ["r2", null, "r1", 2]);
  });
});
