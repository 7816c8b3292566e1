import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseDirectorConfig } from "../../director/director-config.js";
import {
  countSwitches,
  decisionsOf,
  errorsByPhase,
  type FigureInputs,
  homeStreams,
  homeTraffic,
  passFigures,
  phaseOf,
  type RequestRecord,
  regionStates,
  residencyCheck,
  timeUntilShare,
  ttftByPhase,
  withFirstRegions,
} from "./multi-region-figures.js";
import { directorYaml } from "./multi-region-processes.js";
import { multiRegionMarkdown } from "./multi-region-report.js";
import {
  arrivals,
  LATENCY_MS,
  multiRegionSettings,
  nearestRegion,
  type PhaseWindow,
  REGIONS,
  RESIDENCY,
} from "./multi-region-scenario.js";

let seq = 0;
function rec(over: Partial<RequestRecord> & { sentAtMs: number }): RequestRecord {
  seq++;
  return {
    id: `r${seq}`,
    callerRegion: "us-east",
    tenant: "acme",
    session: null,
    ttftMs: 20,
    e2eMs: 300,
    status: 200,
    error: null,
    region: "us-east",
    reason: "home",
    ...over,
  };
}

const failed = (sentAtMs: number, over: Partial<RequestRecord> = {}) =>
  rec({ sentAtMs, status: 503, error: "HTTP 503", ttftMs: Number.NaN, ...over });

const PHASES: PhaseWindow[] = [
  { phase: "steady", startMs: 0, endMs: 10_000 },
  { phase: "degrade", startMs: 10_000, endMs: 20_000 },
  { phase: "fail", startMs: 20_000, endMs: 30_000 },
  { phase: "recover", startMs: 30_000, endMs: 40_000 },
];

const INPUTS: FigureInputs = {
  phases: PHASES,
  latencyMs: LATENCY_MS,
  residency: RESIDENCY,
  failingRegion: "us-east",
  callerRegions: REGIONS,
  regions: REGIONS,
  binMs: 1000,
  movedShare: 0.9,
};

describe("multi-region figures", () => {
  it("places a moment in its phase, start inclusive, end exclusive", () => {
    assert.equal(phaseOf(PHASES, 0), "steady");
    assert.equal(phaseOf(PHASES, 9_999), "steady");
    assert.equal(phaseOf(PHASES, 10_000), "degrade");
    assert.equal(phaseOf(PHASES, 39_999), "recover");
    assert.equal(phaseOf(PHASES, 40_000), null);
  });

  it("counts a stream's region changes between consecutive answered requests, by send time", () => {
    const records = [
      rec({ sentAtMs: 3000, region: "eu-west" }),
      rec({ sentAtMs: 1000 }),
      rec({ sentAtMs: 2000 }),
      failed(2500, { region: null }), // not answered: no region, not a switch
      rec({ sentAtMs: 4000 }),
      rec({ sentAtMs: 1500, tenant: "globex", region: "eu-west" }),
      rec({ sentAtMs: 2500, tenant: "globex", region: "eu-west" }),
      rec({ sentAtMs: 1200, callerRegion: "eu-west", region: "eu-west" }),
      rec({ sentAtMs: 1300, callerRegion: "eu-west", region: "ap-south" }),
    ];
    const s = countSwitches(records);
    assert.equal(s.total, 3);
    assert.deepEqual(s.byStream, { "eu-west/acme": 1, "us-east/acme": 2, "us-east/globex": 0 });
    assert.deepEqual(s.times, [1300, 3000, 4000]);
  });

  it("counts home switches without session requests and spilled ones", () => {
    const records = [
      rec({ sentAtMs: 1000 }),
      rec({ sentAtMs: 2000, region: "eu-west", reason: "spillover" }),
      rec({ sentAtMs: 3000 }),
      rec({ sentAtMs: 4000, region: "eu-west", session: "s1" }),
      rec({ sentAtMs: 5000 }),
      rec({ sentAtMs: 6000, region: "eu-west", reason: "failover" }),
    ];
    assert.equal(countSwitches(records).total, 5);
    assert.equal(countSwitches(records, homeTraffic).total, 1);
  });

  it("finds the streams at home in a region: more than half of their answered requests there", () => {
    const records = [
      rec({ sentAtMs: 100 }),
      rec({ sentAtMs: 200 }),
      rec({ sentAtMs: 300, region: "eu-west" }),
      failed(400, { tenant: "eu-bank", region: null }),
      rec({ sentAtMs: 500, tenant: "eu-bank", region: "eu-west" }),
      rec({ sentAtMs: 600, tenant: "globex" }),
      rec({ sentAtMs: 700, tenant: "globex", region: "eu-west" }),
      rec({ sentAtMs: 20_000, tenant: "ap-health" }), // outside the window
    ];
    assert.deepEqual(homeStreams(records, "us-east", 0, 10_000), ["us-east/acme"]);
  });

  it("times the move to the first bin from which every later bin has the share", () => {
    const elsewhere = (r: RequestRecord) => r.error === null && r.region !== "us-east";
    const opts = { fromMs: 20_000, toMs: 30_000, binMs: 1000, share: 0.9, ok: elsewhere };
    const records = [
      failed(20_100),
      failed(20_600),
      rec({ sentAtMs: 21_100, region: "eu-west" }),
      failed(21_500), // bin 1 at 50%
      rec({ sentAtMs: 22_200, region: "eu-west" }),
      rec({ sentAtMs: 23_300, region: "eu-west" }),
      // bin 4 empty: skipped
      ...Array.from({ length: 9 }, (_, i) => rec({ sentAtMs: 25_000 + i * 10, region: "ap-south" })),
      failed(25_500), // 9 of 10: still ≥ 90%
      rec({ sentAtMs: 29_900, region: "eu-west" }),
      rec({ sentAtMs: 30_100 }), // after the window
    ];
    assert.equal(timeUntilShare(records, opts), 2000);
    assert.equal(timeUntilShare([...records, failed(27_000)], opts), 9000, "a relapse pushes it later");
    assert.equal(timeUntilShare([failed(20_500), failed(29_000)], opts), null, "never");
    assert.equal(timeUntilShare([], opts), null);
    assert.equal(timeUntilShare([rec({ sentAtMs: 20_000, region: "eu-west" })], opts), 0, "at once");
  });

  it("counts residency violations where the request was answered or first sent", () => {
    const records = [
      rec({ sentAtMs: 1, tenant: "eu-bank", region: "eu-west" }),
      rec({ sentAtMs: 2, tenant: "eu-bank", region: "us-east" }),
      rec({ sentAtMs: 3, tenant: "eu-bank", region: "eu-west", firstRegion: "us-east" }),
      failed(4, { tenant: "ap-health", region: "us-east" }), // a 5xx from there: the data went there
      failed(5, { tenant: "ap-health", region: null }), // no reply at all: it reached nothing
      rec({ sentAtMs: 6, tenant: "ap-health", region: "ap-south", firstRegion: "ap-south" }),
      rec({ sentAtMs: 7, tenant: "acme", region: "ap-south" }),
    ];
    assert.deepEqual(residencyCheck(records, RESIDENCY), {
      requests: 6,
      violations: 3,
      byTenant: { "ap-health": 1, "eu-bank": 2 },
    });
  });

  it("takes TTFT percentiles per caller region and phase with the modeled WAN, answered requests only", () => {
    const records = [
      ...Array.from({ length: 19 }, (_, i) => rec({ sentAtMs: 100 + i, ttftMs: 10 })),
      rec({ sentAtMs: 200, ttftMs: 100 }),
      rec({ sentAtMs: 300, ttftMs: 10, tenant: "ap-health", region: "ap-south" }), // + 190 ms
      failed(400),
      rec({ sentAtMs: 21_000, callerRegion: "eu-west", region: "eu-west", ttftMs: 30 }),
    ];
    const p95 = ttftByPhase(records, PHASES, REGIONS, LATENCY_MS, 95, [
      { key: "us-east (no residency)", keep: (r) => r.callerRegion === "us-east" && r.tenant === "acme" },
    ]);
    // 21 answered: 19 at 18 ms, one 108, one 200; nearest rank 95% → the 20th: 108.
    assert.equal(p95.steady["us-east"], 108);
    assert.equal(p95.steady["us-east (no residency)"], 18, "20 answered: the 19th");
    assert.equal(p95.steady.all, 108);
    assert.equal(ttftByPhase(records, PHASES, REGIONS, LATENCY_MS, 100).steady["us-east"], 200);
    assert.equal(p95.steady["eu-west"], null);
    assert.equal(p95.fail["eu-west"], 38);
    assert.equal(p95.degrade.all, null);
  });

  it("counts requests and errors per phase by send time", () => {
    const e = errorsByPhase(
      [rec({ sentAtMs: 5 }), failed(20_000), failed(29_999), rec({ sentAtMs: 45_000 })],
      PHASES,
    );
    assert.deepEqual(e, {
      steady: { requests: 1, errors: 0 },
      degrade: { requests: 0, errors: 0 },
      fail: { requests: 2, errors: 2 },
      recover: { requests: 0, errors: 0 },
    });
  });

  it("puts a pass together: failover, time back, reasons, spillover, residency", () => {
    const records: RequestRecord[] = [];
    for (let t = 0; t < 40_000; t += 250) {
      const inFail = t >= 20_000 && t < 30_000;
      const region = inFail || (t >= 30_000 && t < 33_000) ? "eu-west" : "us-east";
      const spilled = t >= 10_000 && t < 20_000 && t % 1000 === 0;
      if (inFail && t < 21_500) records.push(failed(t, { region: "us-east", reason: "home" }));
      else
        records.push(
          rec({
            sentAtMs: t,
            region: spilled ? "eu-west" : region,
            reason: spilled ? "spillover" : inFail ? "failover" : "home",
          }),
        );
      records.push(
        rec({
          sentAtMs: t + 1,
          callerRegion: "eu-west",
          tenant: "eu-bank",
          region: "eu-west",
          reason: "compliance",
        }),
      );
    }
    const f = passFigures("director", records, INPUTS);
    assert.deepEqual(f.failover.streams, ["us-east/acme"]);
    assert.equal(f.failover.failoverMs, 2000);
    assert.equal(f.failover.lastNotMovedMs, 1250);
    assert.equal(f.failover.errorsInFail, 6);
    assert.equal(f.failover.backMs, 3000);
    assert.equal(f.failover.decidedFailoverMs, null, "no decision log: not known");
    assert.equal(f.errors, 6);
    assert.equal(f.reasons.spillover, 10);
    assert.equal(f.reasons.compliance, 160);
    assert.equal(f.spilledShare, Math.round((10 / f.answered) * 10_000) / 10_000);
    // us-east/acme: 10 spills out and back (20), the failover and the return (2).
    assert.equal(f.switches.all, 22);
    assert.equal(f.switches.home, 2);
    assert.equal(f.switches.allPerMinInDegrade, 120);
    assert.equal(f.switches.homePerMinInDegrade, 0);
    assert.equal(f.residency.violations, 0);
    assert.equal(f.errorsByPhase.fail.errors, 6);
    assert.equal(f.servedByPhase.fail["eu-west"], 34 + 40);
    assert.equal(f.failover.timeline[20]!.failed, 4);
    assert.equal(f.failover.timeline[25]!.elsewhere, 4);
    const md = multiRegionMarkdown({
      setup: "setup",
      passes: [
        { figures: f, events: [], wallS: 40, decisionLines: null, retried: null, failingStates: null },
      ],
      targets: {
        residencyViolations: 0,
        failoverMs: 2000,
        failoverTargetMs: 5000,
        failoverMet: true,
        flappingPerMin: 0,
        flappingTargetPerMin: 2,
        flappingMet: true,
        failErrorsDirector: 6,
        failErrorsNaive: null,
        fewerFailErrorsMet: false,
        backMs: 3000,
        backMet: true,
      },
      problems: [],
      s: multiRegionSettings(true),
    });
    assert.match(md, /\| \*\*time to fail over\*\* .* \| \*\*2\.0 s\*\* \| did not run \|/);
    assert.match(md, /\*\*residency violations\*\* .* \| \*\*0\*\* \(of 160\) \|/);
  });

  it("reads where each request was first sent from the director's decision log", () => {
    const log = [
      `{"ts":"x","event":"director.started","name":"b"}`,
      `{"ts":"x","event":"director.decision","trace_id":"director-r1","region":"eu-west","reason":"failover","retried_from":"us-east","status":"ok"}`,
      `{"ts":"x","event":"director.decision","trace_id":"director-r2","region":"us-east","reason":"home","retried_from":null,"status":"ok"}`,
      "not json",
      "",
    ].join("\n");
    const d = decisionsOf(log);
    assert.equal(d.size, 2);
    const out = withFirstRegions(
      [rec({ id: "r1", sentAtMs: 1 }), rec({ id: "r2", sentAtMs: 2 }), rec({ id: "r3", sentAtMs: 3 })],
      d,
      "director",
    );
    assert.deepEqual(
      out.map((r) => r.firstRegion),
      ["us-east", "us-east", undefined],
    );
  });

  it("follows how the director saw a region from its decisions: runs of one state, residency left out", () => {
    const t0 = Date.parse("2026-01-01T00:00:00.000Z");
    const line = (id: string, endMs: number, tookMs: number, us: string | null) =>
      JSON.stringify({
        ts: new Date(t0 + endMs).toISOString(),
        event: "director.decision",
        trace_id: id,
        region: "eu-west",
        latency_ms: tookMs,
        candidates: [
          { region: "eu-west", filtered: null },
          { region: "us-east", filtered: us },
        ],
      });
    const log = [
      line("a", 1500, 500, null), // decided at 1000
      line("b", 2100, 100, "residency"),
      line("c", 2600, 600, null), // decided at 2000, logged after b
      line("d", 3200, 200, "breaker_open"),
      line("e", 4000, 0, "model_unavailable"),
      line("f", 5000, 0, "model_unavailable"),
      line("g", 6000, 0, null),
    ].join("\n");
    const d = decisionsOf(log);
    assert.equal(d.get("a")!.atEpochMs, t0 + 1000);
    assert.deepEqual(d.get("d")!.candidates, { "eu-west": "ok", "us-east": "breaker_open" });
    assert.deepEqual(regionStates(d.values(), "us-east", t0), [
      { fromMs: 1000, toMs: 2000, state: "ok", decisions: 2 },
      { fromMs: 3000, toMs: 3000, state: "breaker_open", decisions: 1 },
      { fromMs: 4000, toMs: 5000, state: "model_unavailable", decisions: 2 },
      { fromMs: 6000, toMs: 6000, state: "ok", decisions: 1 },
    ]);
  });

  it("times the return on home traffic: sessions held elsewhere by affinity do not count", () => {
    const records: RequestRecord[] = [];
    for (let t = 0; t < 40_000; t += 250) {
      const away = t >= 20_000 && t < 32_000;
      records.push(rec({ sentAtMs: t, region: away ? "eu-west" : "us-east" }));
      // A session that stays in eu-west after the failure until the end.
      records.push(rec({ sentAtMs: t + 1, session: "s1", region: t >= 20_000 ? "eu-west" : "us-east" }));
    }
    const f = passFigures("director", records, INPUTS);
    assert.equal(f.failover.backMs, 2000);
    assert.equal(f.failover.failoverMs, 0);
  });
});

describe("multi-region scenario", () => {
  it("draws the same arrivals for a seed, in time order, at about the configured rates", () => {
    const s = multiRegionSettings(true);
    const a = arrivals(s, 3);
    assert.deepEqual(arrivals(s, 3), a);
    assert.notDeepEqual(arrivals(s, 4), a);
    assert.ok(a.every((x, i) => i === 0 || x.atMs >= a[i - 1]!.atMs));
    const total = Object.values(s.ratePerCaller).reduce((n, r) => n + r, 0) * (s.durationMs / 1000);
    assert.ok(Math.abs(a.length - total) < 0.15 * total, `${a.length} arrivals, about ${total}`);
    const sessions = a.filter((x) => x.session !== null).length / a.length;
    assert.ok(Math.abs(sessions - s.sessionShare) < 0.06, `session share ${sessions}`);
    assert.ok(a.some((x) => x.callerRegion === "us-east" && x.tenant === "eu-bank"));
  });

  it("sends a GeoDNS caller to its own region, and writes a director config the director accepts", () => {
    for (const r of REGIONS) assert.equal(nearestRegion(r), r);
    const text = directorYaml(
      REGIONS.map((region, i) => ({ region, url: `http://127.0.0.1:${9000 + i}` })),
      multiRegionSettings(false),
    );
    const parsed = parseDirectorConfig(text, "director.yaml", {});
    assert.ok(parsed.ok, parsed.ok ? "" : parsed.errors.join("\n"));
    assert.deepEqual(parsed.config.residency, { "eu-bank": ["eu-west"], "ap-health": ["ap-south"] });
    assert.equal(parsed.config.mode, "forward");
    assert.equal(parsed.config.latencyMs["us-east"]!["ap-south"], 190);
  });
});
