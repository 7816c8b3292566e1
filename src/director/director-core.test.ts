import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  EU_CENTRAL,
  EU_WEST,
  query,
  REGIONS,
  type SummaryOptions,
  summary,
  testConfig,
  US_EAST,
} from "../testing/director-core-fixtures.js";
import { RegionDirectorCore } from "./director-core.js";
import type { DirectorDecision } from "./director-types.js";

const T0 = 1_700_000_000_000;

/** A core with every region reporting `opts` at `now`. */
function healthy(now = T0, opts: Partial<Record<string, SummaryOptions>> = {}): RegionDirectorCore {
  const core = new RegionDirectorCore(testConfig());
  for (const r of REGIONS) core.observeSummary(summary(r, now, opts[r]), now);
  return core;
}

function region(d: DirectorDecision): string {
  assert.equal(d.kind, "region", d.kind === "refuse" ? d.message : "");
  return d.kind === "region" ? d.region : "";
}

function filtered(d: DirectorDecision): Record<string, string | null> {
  return Object.fromEntries(d.candidates.map((c) => [c.region, c.filtered]));
}

describe("RegionDirectorCore: filters and score", () => {
  it("sends a caller to its nearest healthy region, with every candidate's score and terms", () => {
    const d = healthy().decide(query(), T0);
    assert.equal(region(d), EU_WEST);
    assert.equal(d.kind === "region" && d.reason, "home");
    assert.equal(d.kind === "region" && d.affinity, null);
    const west = d.candidates.find((c) => c.region === EU_WEST)!;
    assert.deepEqual(west.terms, { latency: 1 - 5 / 80, headroom: 0.8, errors: 1, cost: 1 });
    assert.ok(Math.abs(west.score! - (0.4 * (1 - 5 / 80) + 0.3 * 0.8 + 0.2 + 0.1)) < 1e-12);
    assert.equal(d.candidates.find((c) => c.region === US_EAST)!.terms.latency, 0);
    assert.equal(region(healthy().decide(query({ callerRegion: US_EAST }), T0)), US_EAST);
  });

  it("filters each region for the first reason it fails, in order", () => {
    const core = new RegionDirectorCore(testConfig());
    core.observeSummary(summary(EU_WEST, T0, { draining: true, ready: false }), T0);
    core.observeSummary(summary(EU_CENTRAL, T0, { ready: false }), T0);
    core.observeSummary(summary(US_EAST, T0, { ready: false }), T0);
    const d = core.decide(query(), T0);
    assert.equal(d.kind, "refuse");
    assert.deepEqual(filtered(d), {
      [EU_WEST]: "draining",
      [EU_CENTRAL]: "model_unavailable",
      [US_EAST]: "model_unavailable",
    });
    assert.equal(d.kind === "refuse" && d.code, "no_region");
    // No headroom is a shortage, not a failure: the region stays a candidate (spillover moves the excess).
    core.observeSummary(summary(EU_CENTRAL, T0, { headroom: 0 }), T0);
    const full = core.decide(query(), T0);
    assert.equal(region(full), EU_CENTRAL);
    assert.equal(filtered(full)[EU_CENTRAL], null);
    const gdpr = core.explain(query({ tenant: "gdpr" }), T0);
    assert.equal(filtered(gdpr)[US_EAST], "residency");
  });

  it("serves a pinned version only where it is ready", () => {
    const core = healthy(T0, { [EU_WEST]: { versions: ["v1"] }, [EU_CENTRAL]: { versions: ["v1", "v2"] } });
    const d = core.decide(query({ version: "v2" }), T0);
    assert.equal(region(d), EU_CENTRAL);
    assert.equal(filtered(d)[EU_WEST], "model_unavailable");
    const none = core.decide(query({ version: "v9" }), T0);
    assert.equal(none.kind === "refuse" && none.code, "model_unavailable");
    assert.match(none.kind === "refuse" ? none.message : "", /model "chat" version "v9" is not ready/);
  });

  it("does not trust a stale summary: a region whose summaries stop is out after staleAfterMs", () => {
    const core = healthy(T0);
    for (const r of [EU_CENTRAL, US_EAST]) core.observeSummary(summary(r, T0 + 4_000), T0 + 4_000);
    assert.equal(region(core.explain(query(), T0 + 5_000)), EU_WEST);
    const d = core.decide(query(), T0 + 5_001);
    assert.equal(filtered(d)[EU_WEST], "stale_summary");
    assert.notEqual(region(d), EU_WEST);
    const state = core.regions(T0 + 5_001).find((r) => r.region === EU_WEST)!;
    assert.deepEqual([state.stale, state.summaryAgeMs], [true, 5_001]);
    // A summary computed long ago is stale on arrival; a region never heard from is unknown.
    const late = new RegionDirectorCore(testConfig());
    late.observeSummary(summary(EU_WEST, T0 - 10_000), T0);
    const d2 = late.decide(query(), T0);
    assert.deepEqual(filtered(d2), {
      [EU_WEST]: "stale_summary",
      [EU_CENTRAL]: "stale_summary",
      [US_EAST]: "stale_summary",
    });
  });

  it("drops a summary older than the one it holds", () => {
    const core = healthy(T0);
    core.observeSummary(summary(EU_WEST, T0 - 1, { draining: true }), T0 + 10);
    assert.equal(region(core.decide(query(), T0 + 10)), EU_WEST);
  });

  it("ignores latency for a caller of unknown region, and uses defaultLatencyMs for pairs the matrix lacks", () => {
    const core = healthy();
    const d = core.decide(query({ callerRegion: null }), T0);
    assert.deepEqual(
      d.candidates.map((c) => c.terms.latency),
      [1, 1, 1],
    );
    const far = core.decide(query({ callerRegion: "ap-south" }), T0);
    assert.deepEqual(
      far.candidates.map((c) => c.terms.latency),
      [0, 0, 0],
    );
  });

  it("adds the measured round trip's rise above its lowest to the matrix", () => {
    const core = new RegionDirectorCore(testConfig());
    core.observeSummary(summary(EU_WEST, T0), T0, 10);
    core.observeSummary(summary(EU_WEST, T0 + 1_000), T0 + 1_000, 210); // EWMA 10 + 0.3 × 200 = 70
    core.observeSummary(summary(EU_CENTRAL, T0 + 1_000), T0 + 1_000, 30);
    core.observeSummary(summary(US_EAST, T0 + 1_000), T0 + 1_000, 90);
    const d = core.decide(query(), T0 + 1_000);
    // eu-west: 5 + 60 = 65 ms, eu-central 20, us-east 80.
    assert.deepEqual(
      d.candidates.map((c) => c.terms.latency),
      [1 - 65 / 80, 1 - 20 / 80, 0],
    );
    assert.equal(core.regions(T0 + 1_000)[0]!.measuredRttMs, 70);
  });

  it("gives reason compliance when the tenant may use exactly one region", () => {
    const d = healthy().decide(query({ tenant: "bank", callerRegion: US_EAST }), T0);
    assert.equal(region(d), EU_WEST);
    assert.equal(d.kind === "region" && d.reason, "compliance");
  });
});

describe("RegionDirectorCore: residency", () => {
  type Failure = "ok" | "stale" | "draining" | "polls" | "errors" | "no_model" | "no_headroom";
  const failures: Failure[] = ["ok", "stale", "draining", "polls", "errors", "no_model", "no_headroom"];

  function apply(core: RegionDirectorCore, r: string, f: Failure, now: number): void {
    if (f === "stale") return;
    if (f === "polls") {
      for (let i = 0; i < 3; i++) core.observePollFailure(r, now, "timeout");
      return;
    }
    const opts: SummaryOptions =
      f === "draining"
        ? { draining: true }
        : f === "errors"
          ? { errorRate: 0.5 }
          : f === "no_model"
            ? { ready: false }
            : f === "no_headroom"
              ? { headroom: 0 }
              : {};
    core.observeSummary(summary(r, now, opts), now);
  }

  it("never sends a tenant's request outside its regions, whatever fails; refuses naming the constraint", () => {
    const failureSet = fc.record({
      [EU_WEST]: fc.constantFrom(...failures),
      [EU_CENTRAL]: fc.constantFrom(...failures),
      [US_EAST]: fc.constantFrom(...failures),
    });
    const step = fc.record({ set: failureSet, dtMs: fc.integer({ min: 0, max: 15_000 }), probes: fc.nat(4) });
    fc.assert(
      fc.property(
        fc.array(step, { minLength: 1, maxLength: 12 }),
        fc.constantFrom("gdpr", "bank"),
        (steps, tenant) => {
          const allowed = tenant === "gdpr" ? [EU_WEST, EU_CENTRAL] : [EU_WEST];
          const core = healthy(T0);
          let now = T0;
          for (const s of steps) {
            now += s.dtMs;
            for (const r of REGIONS) apply(core, r, s.set[r]!, now);
            for (let i = 0; i <= s.probes; i++) {
              const session = i % 2 === 0 ? null : `s${i}`;
              const d = core.decide(query({ tenant, session, callerRegion: US_EAST }), now);
              if (d.kind === "region") {
                assert.ok(allowed.includes(d.region), `${tenant} sent to ${d.region}`);
                if (i % 3 !== 1)
                  core.observeOutcome(d.region, (s.set as Record<string, Failure>)[d.region] === "ok", now);
                continue;
              }
              const out = d.candidates.filter((c) => allowed.includes(c.region));
              assert.ok(out.every((c) => c.filtered !== null));
              if (d.code === "residency_unavailable") {
                assert.match(
                  d.message,
                  new RegExp(`tenant "${tenant}" may be served only in ${allowed.join(", ")}`),
                );
                for (const r of allowed) assert.match(d.message, new RegExp(`${r}: \\w+`));
              } else {
                assert.equal(d.code, "model_unavailable");
                assert.ok(
                  REGIONS.every(
                    (r) => s.set[r] === "no_model" || s.set[r] === "stale" || s.set[r] === "polls",
                  ),
                );
              }
            }
          }
        },
      ),
      { seed: 0x18d1, numRuns: 300 },
    );
  });

  it("refuses with residency_unavailable when every allowed region is down, though others are up", () => {
    const core = healthy(T0);
    core.observeSummary(summary(EU_WEST, T0 + 1_000, { errorRate: 0.5 }), T0 + 1_000);
    for (let i = 0; i < 3; i++) core.observePollFailure(EU_CENTRAL, T0 + 1_000, "connect ECONNREFUSED");
    const d = core.decide(query({ tenant: "gdpr" }), T0 + 1_000);
    assert.equal(d.kind, "refuse");
    if (d.kind !== "refuse") return;
    assert.equal(d.code, "residency_unavailable");
    assert.equal(
      d.message,
      'tenant "gdpr" may be served only in eu-west, eu-central (data residency), and none of them can take model "chat" now: ' +
        "eu-west: breaker_open (open: error_rate 0.5 ≥ 0.2); " +
        "eu-central: breaker_open (open: 3 failed polls (last: connect ECONNREFUSED))",
    );
    assert.equal(region(core.decide(query(), T0 + 1_000)), US_EAST);
  });

  it("says model_unavailable when no region serves the model, and no_region for a tenant without residency", () => {
    const core = healthy(T0);
    const d = core.decide(query({ model: "nope" }), T0);
    assert.deepEqual(d.kind === "refuse" && [d.code, d.message], [
      "model_unavailable",
      'model "nope" is not ready in any region',
    ]);
    const gone = core.decide(query(), T0 + 6_000);
    assert.equal(gone.kind === "refuse" && gone.code, "no_region");
    assert.match(
      gone.kind === "refuse" ? gone.message : "",
      /eu-west: stale_summary \(last one 6000 ms old\)/,
    );
  });
});

describe("RegionDirectorCore: explain", () => {
  it("changes nothing: a twin that was also asked to explain decides exactly the same", () => {
    const cfg = testConfig({ weights: { latency: 0.8, headroom: 0.1, errors: 0.05, cost: 0.05 } });
    const plain = new RegionDirectorCore(cfg);
    const asked = new RegionDirectorCore(cfg);
    const both = (f: (c: RegionDirectorCore) => void) => {
      f(plain);
      f(asked);
    };
    const decisions: [DirectorDecision, DirectorDecision][] = [];
    for (let t = 0; t < 120; t++) {
      const now = T0 + t * 500;
      const bad = t >= 20 && t < 40;
      both((c) => {
        c.observeSummary(summary(EU_WEST, now, { errorRate: bad ? 0.6 : 0 }), now);
        c.observeSummary(summary(EU_CENTRAL, now, { headroom: t > 50 ? 0.05 : 0.8 }), now);
        c.observeSummary(summary(US_EAST, now), now);
      });
      const q = query({ session: t % 3 === 0 ? `s${t % 7}` : null });
      for (let i = 0; i < 3; i++) asked.explain(q, now);
      asked.explain(query({ tenant: "gdpr" }), now);
      decisions.push([plain.decide(q, now), asked.decide(q, now)]);
    }
    for (const [a, b] of decisions) assert.deepEqual(b, a);
    const reasons = new Set(decisions.map(([a]) => (a.kind === "region" ? a.reason : a.code)));
    assert.ok(
      reasons.has("spillover") && reasons.has("failover") && reasons.has("home"),
      [...reasons].join(),
    );
    assert.deepEqual(asked.regions(T0 + 60_000), plain.regions(T0 + 60_000));
  });

  it("does not consume a probe or write affinity", () => {
    const core = healthy(T0);
    for (let i = 0; i < 3; i++) core.observeOutcome(EU_WEST, false, T0);
    const now = T0 + 10_000;
    for (const r of REGIONS) core.observeSummary(summary(r, now, { requests: 0 }), now - 1);
    assert.equal(core.regions(now)[0]!.breaker, "half-open");
    for (let i = 0; i < 10; i++) assert.equal(region(core.explain(query({ session: "s1" }), now)), EU_WEST);
    const sent = [1, 2, 3, 4].map(() => region(core.decide(query(), now)));
    assert.deepEqual(sent, [EU_WEST, EU_WEST, EU_WEST, EU_CENTRAL]);
    const first = core.decide(query({ session: "s1" }), now);
    assert.equal(first.kind === "region" && first.affinity, "new");
  });
});
