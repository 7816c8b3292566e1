// The multi-region figures, from the requests as the callers saw them (and, for the director pass, the
// director's decision log joined by trace id). Pure: multi-region.ts records, this computes, the test
// checks. Per pass:
// - time to fail over: from the failure's start to the start of the first bin from which, in every later
//   bin of the fail phase, ≥ 90% of the traffic of the streams that were at home in the failing region
//   (before it degraded) is served elsewhere — as answered (the caller's view) and as first decided
//   (the director's view: a request retried after a 5xx was first sent to the failing region);
// - the time back: likewise from the recovery's start, until ≥ 90% of their home traffic (below) is
//   served in that region again;
// - region switches: changes of the serving region between consecutive requests of each (caller region,
//   tenant) stream, over every answered request, and over the stream's home traffic only (no session
//   header, not spilled), and both per minute in the degrade phase (flapping);
// - requests by reason (`x-ai-director-reason`), the share spilled over;
// - live TTFT P95 per caller region per phase, the modeled WAN round trip (caller region → serving
//   region, from the latency matrix) added to each measured TTFT;
// - errors per phase; residency violations: a request of a residency tenant that reached a region
//   outside its allowed ones.

import { round } from "../stats.js";
import {
  answered,
  countSwitches,
  errorsByPhase,
  type FigureInputs,
  homeStreams,
  homeTraffic,
  type PassFigures,
  type PhaseTtft,
  perMinute,
  phaseOf,
  phaseWindow,
  type RequestRecord,
  residencyCheck,
  streamOf,
  streamTimeline,
  timeUntilShare,
  ttftByPhase,
  unrestrictedGroup,
} from "./multi-region-measures.js";
import type { Phase } from "./multi-region-scenario.js";

export * from "./multi-region-logs.js";
export * from "./multi-region-measures.js";

export function passFigures(name: string, records: readonly RequestRecord[], f: FigureInputs): PassFigures {
  const steady = phaseWindow(f.phases, "steady");
  const degrade = phaseWindow(f.phases, "degrade");
  const fail = phaseWindow(f.phases, "fail");
  const recover = phaseWindow(f.phases, "recover");
  const streams = homeStreams(records, f.failingRegion, steady.startMs, steady.endMs);
  const ofStreams = records.filter((r) => streams.includes(streamOf(r)));
  const elsewhere = (r: RequestRecord) => answered(r) && r.region !== f.failingRegion;
  const window = { fromMs: fail.startMs, toMs: fail.endMs, binMs: f.binMs, share: f.movedShare };
  const inFail = ofStreams.filter((r) => r.sentAtMs >= fail.startMs && r.sentAtMs < fail.endMs);
  const notMoved = inFail.filter((r) => !elsewhere(r)).map((r) => r.sentAtMs - fail.startMs);
  const decided = ofStreams.filter((r) => r.firstRegion !== undefined);

  const all = countSwitches(records);
  const home = countSwitches(records, homeTraffic);
  const byStream: Record<string, { all: number; home: number }> = {};
  for (const k of Object.keys(all.byStream))
    byStream[k] = { all: all.byStream[k]!, home: home.byStream[k] ?? 0 };

  const reasons: Record<string, number> = {};
  let withReason = 0;
  for (const r of records) {
    if (!answered(r)) continue;
    const k = r.reason ?? "none";
    reasons[k] = (reasons[k] ?? 0) + 1;
    if (r.reason !== null) withReason++;
  }
  const answeredCount = records.filter(answered).length;

  const groups = [unrestrictedGroup(f)];
  const p95 = ttftByPhase(records, f.phases, f.callerRegions, f.latencyMs, 95, groups);
  const p50 = ttftByPhase(records, f.phases, f.callerRegions, f.latencyMs, 50, groups);
  const ttft = {} as Record<Phase, PhaseTtft>;
  const servedByPhase = {} as Record<Phase, Record<string, number>>;
  for (const w of f.phases) {
    ttft[w.phase] = { p95Ms: p95[w.phase], p50Ms: p50[w.phase] };
    const row: Record<string, number> = {};
    for (const region of f.regions) row[region] = 0;
    servedByPhase[w.phase] = row;
  }
  for (const r of records) {
    const phase = phaseOf(f.phases, r.sentAtMs);
    if (phase !== null && answered(r))
      servedByPhase[phase][r.region!] = (servedByPhase[phase][r.region!] ?? 0) + 1;
  }

  return {
    name,
    requests: records.length,
    answered: answeredCount,
    errors: records.length - answeredCount,
    failover: {
      streams,
      failoverMs: timeUntilShare(ofStreams, { ...window, ok: elsewhere }),
      decidedFailoverMs: decided.some((r) => r.sentAtMs >= fail.startMs && r.sentAtMs < fail.endMs)
        ? timeUntilShare(decided, {
            ...window,
            ok: (r) => typeof r.firstRegion === "string" && r.firstRegion !== f.failingRegion,
          })
        : null,
      lastNotMovedMs: notMoved.length === 0 ? null : round(Math.max(...notMoved), 0),
      servedElsewhereShare:
        inFail.length === 0 ? null : round(inFail.filter(elsewhere).length / inFail.length, 3),
      errorsInFail: inFail.filter((r) => !answered(r)).length,
      backMs: timeUntilShare(ofStreams.filter(homeTraffic), {
        fromMs: recover.startMs,
        toMs: recover.endMs,
        binMs: f.binMs,
        share: f.movedShare,
        ok: (r) => answered(r) && r.region === f.failingRegion,
      }),
      timeline: streamTimeline(records, streams, f.failingRegion, f.binMs, recover.endMs),
    },
    switches: {
      all: all.total,
      home: home.total,
      allPerMinInDegrade: perMinute(all.times, degrade),
      homePerMinInDegrade: perMinute(home.times, degrade),
      byStream,
    },
    reasons,
    spilledShare: withReason === 0 ? null : round((reasons.spillover ?? 0) / answeredCount, 4),
    ttftByPhase: ttft,
    errorsByPhase: errorsByPhase(records, f.phases),
    servedByPhase,
    residency: residencyCheck(records, f.residency),
  };
}
