import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  EU_CENTRAL,
  EU_WEST,
  query,
  REGIONS,
  type SummaryOptions,
  summary,
  testConfig,
} from "../testing/director-core-fixtures.js";
import { RegionDirectorCore } from "./director-core.js";
import type { DirectorDecision } from "./director-types.js";

const T0 = 1_700_000_000_000;
const DWELL = 30_000;

type Region = Extract<DirectorDecision, { kind: "region" }>;

function asRegion(d: DirectorDecision): Region {
  assert.equal(d.kind, "region", d.kind === "refuse" ? d.message : "");
  return d as Region;
}

/** Every region polled each second, eu-west as `west(t)` says; a decision every 100 ms. */
function simulate(
  core: RegionDirectorCore,
  from: number,
  to: number,
  west: (t: number) => SummaryOptions,
  onDecision: (d: Region, t: number) => void = () => {},
): void {
  for (let t = from; t < to; t += 100) {
    if (t % 1_000 === 0) {
      for (const r of REGIONS) core.observeSummary(summary(r, T0 + t, r === EU_WEST ? west(t) : {}), T0 + t);
    }
    onDecision(asRegion(core.decide(query(), T0 + t)), t);
  }
}

describe("RegionDirectorCore: hysteresis", () => {
  it("moves traffic off a degraded region only after the dwell time", () => {
    const core = new RegionDirectorCore(testConfig());
    const degraded = { errorRate: 0.15, headroom: 0.3 }; // still passes, but scores 0.225 below eu-central
    const seen: [number, string][] = [];
    simulate(
      core,
      0,
      45_000,
      (t) => (t >= 5_000 ? degraded : {}),
      (d, t) => seen.push([t, d.region]),
    );
    const moved = seen.find(([, r]) => r !== EU_WEST)!;
    assert.deepEqual(moved, [DWELL, EU_CENTRAL]);
    assert.ok(seen.filter(([t]) => t < DWELL).every(([, r]) => r === EU_WEST));
    assert.ok(seen.filter(([t]) => t >= DWELL).every(([, r]) => r === EU_CENTRAL));
  });

  it("does not move for a region better by less than the margin", () => {
    const core = new RegionDirectorCore(testConfig());
    const regions = new Set<string>();
    // 0.4 × 0.9375 + 0.3 × 0.55 + 0.3 = 0.84 vs eu-central's 0.84: not more than 0.1 better.
    simulate(
      core,
      0,
      120_000,
      (t) => (t >= 5_000 ? { headroom: 0.55 } : {}),
      (d) => regions.add(d.region),
    );
    assert.deepEqual([...regions], [EU_WEST]);
  });

  for (const [what, bad] of [
    ["error rate (its breaker opens and half-opens)", { errorRate: 0.6 }],
    ["draining flag", { draining: true }],
  ] as const) {
    it(`does not flap with a region whose ${what} oscillates every few seconds`, () => {
      const core = new RegionDirectorCore(testConfig());
      const runMs = 600_000;
      let home: string | null = null;
      let switches = 0;
      let probes = 0;
      simulate(
        core,
        0,
        runMs,
        (t) => (Math.floor(t / 3_000) % 2 === 1 ? bad : {}),
        (d, t) => {
          const west = core.regions(T0 + t).find((r) => r.region === EU_WEST)!;
          if (d.region === EU_WEST && west.breaker === "half-open") {
            probes++;
            core.observeOutcome(EU_WEST, true, T0 + t);
            return;
          }
          if (home !== null && d.region !== home) switches++;
          home = d.region;
        },
      );
      assert.ok(switches <= runMs / DWELL, `${switches} switches`);
      assert.equal(switches, 1, "one failover, and no way back while it keeps failing");
      assert.equal(home, EU_CENTRAL);
      // Half-open episodes come at most every openMs (10 s), each with at most halfOpenProbes probes.
      assert.ok(probes <= (runMs / 10_000) * 3, `${probes} probes`);
      if ("errorRate" in bad) assert.ok(probes > 0, "the half-open region was probed");
    });
  }

  it("does not flap when the home's headroom oscillates to none: the excess spills, at most one scored move", () => {
    const core = new RegionDirectorCore(testConfig());
    let homeSwitches = 0;
    let home: string | null = null as string | null;
    let spilled = 0;
    let total = 0;
    simulate(
      core,
      0,
      600_000,
      (t) => (Math.floor(t / 3_000) % 2 === 1 ? { headroom: 0 } : {}),
      (d) => {
        total++;
        if (d.reason === "spillover") {
          spilled++;
          return;
        }
        if (home !== null && d.region !== home) homeSwitches++;
        home = d.region;
      },
    );
    // A shortage is not a failure: no failover on each empty summary, only the scored move the dwell
    // allows (eu-central scores better while eu-west has no room), once, in ten minutes.
    assert.ok(homeSwitches <= 1, `${homeSwitches} home switches`);
    assert.ok(spilled > 0 && spilled < total / 2, `${spilled} of ${total} spilled`);
  });

  it("fails over at once, probes the half-open region, closes it, and returns only after the dwell", () => {
    const core = new RegionDirectorCore(testConfig());
    const poll = (t: number) => {
      for (const r of REGIONS) {
        // eu-west is better by more than the margin (0.915 against 0.765), so traffic does go back.
        const headroom = r === EU_CENTRAL ? 0.55 : 0.8;
        core.observeSummary(summary(r, T0 + t, { requests: 0, headroom }), T0 + t);
      }
    };
    const decide = (t: number) => asRegion(core.decide(query(), T0 + t));
    for (let t = 0; t <= 40_000; t += 1_000) {
      poll(t);
      assert.equal(decide(t).region, EU_WEST);
    }
    for (let i = 0; i < 3; i++) core.observeOutcome(EU_WEST, false, T0 + 40_000);
    const failover = decide(40_000);
    assert.deepEqual([failover.region, failover.reason], [EU_CENTRAL, "failover"]);
    assert.equal(core.regions(T0 + 40_000)[0]!.breakerReason, "3 failed requests");
    poll(49_000);
    assert.deepEqual([decide(49_999).region, decide(49_999).reason], [EU_CENTRAL, "failover"]);
    // Half-open at 50 s: three probes go to eu-west (it is where traffic failed over from), then none.
    const probes = [0, 1, 2, 3].map(() => decide(50_000));
    assert.deepEqual(
      probes.map((d) => d.region),
      [EU_WEST, EU_WEST, EU_WEST, EU_CENTRAL],
    );
    assert.deepEqual([probes[0]!.reason, probes[0]!.affinity], ["home", null]);
    core.observeOutcome(EU_WEST, true, T0 + 50_100);
    core.observeOutcome(EU_WEST, true, T0 + 50_200);
    assert.equal(core.regions(T0 + 50_200)[0]!.breaker, "half-open");
    core.observeOutcome(EU_WEST, true, T0 + 50_300);
    assert.equal(core.regions(T0 + 50_300)[0]!.breaker, "closed");
    // Closed at 50.3 s: healthy, but traffic returns only once it has been healthy for a dwell.
    for (let t = 51_000; t <= 80_000; t += 1_000) {
      poll(t);
      const d = decide(t);
      assert.deepEqual([d.region, d.reason], [EU_CENTRAL, "home"], `at ${t}`);
    }
    assert.equal(decide(80_299).region, EU_CENTRAL);
    const back = decide(80_300);
    assert.deepEqual([back.region, back.reason], [EU_WEST, "home"]);
  });

  it("reopens on a failed probe and stays failed over", () => {
    const core = new RegionDirectorCore(testConfig());
    for (const r of REGIONS) core.observeSummary(summary(r, T0, { requests: 0 }), T0);
    core.decide(query(), T0);
    for (let i = 0; i < 3; i++) core.observePollFailure(EU_WEST, T0, "timeout");
    assert.equal(asRegion(core.decide(query(), T0)).region, EU_CENTRAL);
    for (const r of REGIONS) core.observeSummary(summary(r, T0 + 10_000, { requests: 0 }), T0 + 10_000);
    // The good poll at 10 s counts as the first success; the probe fails.
    assert.equal(asRegion(core.decide(query(), T0 + 10_000)).region, EU_WEST);
    core.observeOutcome(EU_WEST, false, T0 + 10_100);
    const state = core.regions(T0 + 10_100)[0]!;
    assert.deepEqual([state.breaker, state.breakerReason], ["open", "probe request failed while half-open"]);
    assert.equal(asRegion(core.decide(query(), T0 + 10_100)).region, EU_CENTRAL);
  });

  it("keeps a separate home per caller region", () => {
    const core = new RegionDirectorCore(testConfig());
    for (const r of REGIONS) core.observeSummary(summary(r, T0), T0);
    assert.equal(asRegion(core.decide(query(), T0)).region, EU_WEST);
    assert.equal(asRegion(core.decide(query({ callerRegion: "us-east" }), T0)).region, "us-east");
    assert.equal(asRegion(core.decide(query(), T0 + 1)).region, EU_WEST);
  });
});

describe("RegionDirectorCore: spillover", () => {
  const latencyFirst = testConfig({ weights: { latency: 0.9, headroom: 0.02, errors: 0.04, cost: 0.04 } });

  function spilled(headroom: number, n = 1_000): { spilled: number; home: number; to: Set<string> } {
    const core = new RegionDirectorCore(latencyFirst);
    for (const r of REGIONS) core.observeSummary(summary(r, T0, r === EU_WEST ? { headroom } : {}), T0);
    let count = 0;
    const to = new Set<string>();
    for (let i = 0; i < n; i++) {
      const d = asRegion(core.decide(query(), T0 + i));
      if (d.reason === "spillover") {
        count++;
        to.add(d.region);
      } else assert.deepEqual([d.region, d.reason], [EU_WEST, "home"]);
    }
    return { spilled: count, home: n - count, to };
  }

  it("moves only the excess: the share grows with the shortfall, capped at maxShare", () => {
    const at = (h: number) => spilled(h);
    const a = at(0.09); // (0.15 − 0.09) / 0.15 = 0.4
    assert.ok(Math.abs(a.spilled - 400) <= 1, `${a.spilled}`);
    assert.deepEqual([...a.to], [EU_CENTRAL]);
    const b = at(0.12); // 0.2
    assert.ok(Math.abs(b.spilled - 200) <= 1, `${b.spilled}`);
    const c = at(0.01); // 0.933…, capped at 0.5
    assert.ok(Math.abs(c.spilled - 500) <= 1, `${c.spilled}`);
  });

  it("spills nothing while headroom is at or above minHeadroom", () => {
    assert.equal(spilled(0.15).spilled, 0);
    assert.equal(spilled(0.8).spilled, 0);
  });

  it("does not spill outside the tenant's only region", () => {
    const core = new RegionDirectorCore(latencyFirst);
    for (const r of REGIONS) core.observeSummary(summary(r, T0, { headroom: 0.05 }), T0);
    for (let i = 0; i < 100; i++) {
      const d = asRegion(core.decide(query({ tenant: "bank" }), T0 + i));
      assert.deepEqual([d.region, d.reason], [EU_WEST, "compliance"]);
    }
  });
});

describe("RegionDirectorCore: streams", () => {
  it("shares one home among callers of regions the latency matrix lacks", () => {
    const core = new RegionDirectorCore(testConfig());
    const degraded = { errorRate: 0.15, headroom: 0.3 };
    const seen: string[] = [];
    simulate(
      core,
      0,
      30_100,
      (t) => (t >= 21_000 ? degraded : {}),
      (_, t) => {
        // A caller from a made-up region joins at 20 s; a stream of its own would dwell until 50 s.
        const callerRegion = t < 20_000 ? "ap-south" : "made-up";
        if (t === 0 || t === 20_000 || t === 30_000) {
          seen.push(asRegion(core.decide(query({ callerRegion }), T0 + t)).region);
        }
      },
    );
    assert.deepEqual(seen, [EU_WEST, EU_WEST, EU_CENTRAL]);
  });
});
