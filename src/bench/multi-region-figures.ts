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

import type { Phase, PhaseWindow } from "./multi-region-scenario.js";
import { percentile, round } from "./stats.js";

/** One request as the caller saw it; times in ms from the pass's start. */
export interface RequestRecord {
  readonly id: string;
  readonly callerRegion: string;
  readonly tenant: string;
  readonly session: string | null;
  readonly sentAtMs: number;
  /** To the first content token; NaN when none came (or the request failed). */
  readonly ttftMs: number;
  readonly e2eMs: number;
  /** HTTP status; 0 when no reply came at all. */
  readonly status: number;
  readonly error: string | null;
  /** The region that answered (the director's header, or the naive pass's gateway); null: none did. */
  readonly region: string | null;
  /** The director's `x-ai-director-reason`; null in the naive pass. */
  readonly reason: string | null;
  /**
   * The region the request was first sent to: the director's `retried_from` when it retried, else its
   * region (from its decision log); the naive pass's gateway. Undefined: not known (no log line).
   */
  readonly firstRegion?: string | null;
}

export interface FigureInputs {
  readonly phases: readonly PhaseWindow[];
  readonly latencyMs: Readonly<Record<string, Readonly<Record<string, number>>>>;
  readonly residency: Readonly<Record<string, readonly string[]>>;
  readonly failingRegion: string;
  readonly callerRegions: readonly string[];
  readonly regions: readonly string[];
  readonly binMs: number;
  /** The share of the traffic that counts as moved (0.9). */
  readonly movedShare: number;
}

export interface SwitchCount {
  readonly total: number;
  /** The later request's send time of each switch, ms. */
  readonly times: readonly number[];
  readonly byStream: Readonly<Record<string, number>>;
}

export interface PhaseTtft {
  /** Per caller region, and `all`; ms, with the modeled WAN; null: nothing answered. */
  readonly p95Ms: Readonly<Record<string, number | null>>;
  readonly p50Ms: Readonly<Record<string, number | null>>;
}

export interface TimelineBin {
  readonly atMs: number;
  requests: number;
  inRegion: number;
  elsewhere: number;
  failed: number;
}

export interface PassFigures {
  readonly name: string;
  readonly requests: number;
  readonly answered: number;
  readonly errors: number;
  readonly failover: {
    /** The streams whose traffic was at home in the failing region in the steady phase. */
    readonly streams: readonly string[];
    /** The caller's view; null: never within the fail phase. */
    readonly failoverMs: number | null;
    /** The director's view (first attempts); null: never, or not known. */
    readonly decidedFailoverMs: number | null;
    /** The last of those streams' requests that was not served elsewhere, ms after the failure's start. */
    readonly lastNotMovedMs: number | null;
    /** Of those streams' requests in the fail phase, the share served elsewhere. */
    readonly servedElsewhereShare: number | null;
    readonly errorsInFail: number;
    /**
     * From the recovery's start until their home traffic (no session, not spilled) is served in the
     * region again; null: not within the phase. Sessions follow once their affinity has run out.
     */
    readonly backMs: number | null;
    /** Those streams' requests per bin over the whole pass. */
    readonly timeline: readonly TimelineBin[];
  };
  readonly switches: {
    readonly all: number;
    readonly home: number;
    readonly allPerMinInDegrade: number;
    readonly homePerMinInDegrade: number;
    readonly byStream: Readonly<Record<string, { all: number; home: number }>>;
  };
  /** Answered requests by the director's reason (`none`: no reason header). */
  readonly reasons: Readonly<Record<string, number>>;
  /** Of the answered requests, the share spilled over; null in the naive pass (no reasons). */
  readonly spilledShare: number | null;
  readonly ttftByPhase: Readonly<Record<Phase, PhaseTtft>>;
  readonly errorsByPhase: Readonly<Record<Phase, { requests: number; errors: number }>>;
  /** Answered requests per serving region, per phase. */
  readonly servedByPhase: Readonly<Record<Phase, Readonly<Record<string, number>>>>;
  readonly residency: {
    readonly requests: number;
    readonly violations: number;
    readonly byTenant: Readonly<Record<string, number>>;
  };
}

/** The phase a moment falls in; null outside every phase. */
export function phaseOf(phases: readonly PhaseWindow[], atMs: number): Phase | null {
  for (const p of phases) if (atMs >= p.startMs && atMs < p.endMs) return p.phase;
  return null;
}

function phaseWindow(phases: readonly PhaseWindow[], phase: Phase): PhaseWindow {
  const w = phases.find((p) => p.phase === phase);
  if (!w) throw new Error(`no ${phase} phase`);
  return w;
}

/** A stream: one caller region's one tenant. */
export function streamOf(r: Pick<RequestRecord, "callerRegion" | "tenant">): string {
  return `${r.callerRegion}/${r.tenant}`;
}

export function answered(r: RequestRecord): boolean {
  return r.error === null && r.region !== null;
}

/**
 * Changes of serving region between consecutive answered requests (by send time) of each stream, over
 * the records `counted` keeps.
 */
export function countSwitches(
  records: readonly RequestRecord[],
  counted: (r: RequestRecord) => boolean = () => true,
): SwitchCount {
  const byStream = new Map<string, RequestRecord[]>();
  for (const r of records) {
    if (!answered(r) || !counted(r)) continue;
    const k = streamOf(r);
    const list = byStream.get(k) ?? [];
    list.push(r);
    byStream.set(k, list);
  }
  const times: number[] = [];
  const counts: Record<string, number> = {};
  for (const [k, list] of [...byStream].sort(([a], [b]) => a.localeCompare(b))) {
    list.sort((a, b) => a.sentAtMs - b.sentAtMs);
    let n = 0;
    for (let i = 1; i < list.length; i++) {
      if (list[i]!.region !== list[i - 1]!.region) {
        n++;
        times.push(list[i]!.sentAtMs);
      }
    }
    counts[k] = n;
  }
  times.sort((a, b) => a - b);
  return { total: times.length, times, byStream: counts };
}

/** A stream's home traffic: no session header (affinity), not spilled over. */
export function homeTraffic(r: RequestRecord): boolean {
  return r.session === null && r.reason !== "spillover";
}

/** The streams more than half of whose answered requests sent in [fromMs, toMs) were served in `region`. */
export function homeStreams(
  records: readonly RequestRecord[],
  region: string,
  fromMs: number,
  toMs: number,
): string[] {
  const seen = new Map<string, { here: number; all: number }>();
  for (const r of records) {
    if (!answered(r) || r.sentAtMs < fromMs || r.sentAtMs >= toMs) continue;
    const k = streamOf(r);
    const c = seen.get(k) ?? { here: 0, all: 0 };
    c.all++;
    if (r.region === region) c.here++;
    seen.set(k, c);
  }
  return [...seen]
    .filter(([, c]) => c.here * 2 > c.all)
    .map(([k]) => k)
    .sort();
}

/**
 * The time from `fromMs` to the start of the first bin (of `binMs`, from `fromMs`, up to `toMs`) from
 * which every later non-empty bin has at least `share` of its requests `ok`; null when even the last
 * non-empty bin falls short, or there is none.
 */
export function timeUntilShare(
  records: readonly RequestRecord[],
  opts: { fromMs: number; toMs: number; binMs: number; share: number; ok: (r: RequestRecord) => boolean },
): number | null {
  const bins = Math.ceil((opts.toMs - opts.fromMs) / opts.binMs);
  if (bins <= 0) return null;
  const ok = new Array<number>(bins).fill(0);
  const all = new Array<number>(bins).fill(0);
  for (const r of records) {
    if (r.sentAtMs < opts.fromMs || r.sentAtMs >= opts.toMs) continue;
    const b = Math.floor((r.sentAtMs - opts.fromMs) / opts.binMs);
    all[b]!++;
    if (opts.ok(r)) ok[b]!++;
  }
  let first: number | null = null;
  for (let b = bins - 1; b >= 0; b--) {
    if (all[b] === 0) continue;
    if (ok[b]! < opts.share * all[b]! - 1e-9) break;
    first = b;
  }
  return first === null ? null : first * opts.binMs;
}

/** Requests of residency tenants, and those that reached a region outside their allowed ones. */
export function residencyCheck(
  records: readonly RequestRecord[],
  residency: Readonly<Record<string, readonly string[]>>,
): { requests: number; violations: number; byTenant: Record<string, number> } {
  let requests = 0;
  let violations = 0;
  const byTenant: Record<string, number> = {};
  for (const t of Object.keys(residency).sort()) byTenant[t] = 0;
  for (const r of records) {
    const allowed = residency[r.tenant];
    if (allowed === undefined) continue;
    requests++;
    // Where the data went: the region that answered, or where it was first sent (a retried 5xx).
    const reached = [r.region, r.firstRegion].filter((x): x is string => typeof x === "string");
    if (reached.some((x) => !allowed.includes(x))) {
      violations++;
      byTenant[r.tenant] = (byTenant[r.tenant] ?? 0) + 1;
    }
  }
  return { requests, violations, byTenant };
}

/** A further group of requests the TTFT table reports on, besides each caller region and all. */
export interface TtftGroup {
  readonly key: string;
  readonly keep: (r: RequestRecord) => boolean;
}

/**
 * TTFT percentile of the answered requests sent in each phase, per caller region and over all, with
 * the modeled WAN round trip (caller region → serving region) added to each.
 */
export function ttftByPhase(
  records: readonly RequestRecord[],
  phases: readonly PhaseWindow[],
  callerRegions: readonly string[],
  latencyMs: Readonly<Record<string, Readonly<Record<string, number>>>>,
  p: number,
  extra: readonly TtftGroup[] = [],
): Record<Phase, Record<string, number | null>> {
  const groups = new Map<string, number[]>();
  for (const r of records) {
    if (!answered(r) || !Number.isFinite(r.ttftMs)) continue;
    const phase = phaseOf(phases, r.sentAtMs);
    if (phase === null) continue;
    const v = r.ttftMs + (latencyMs[r.callerRegion]?.[r.region!] ?? 0);
    const keys = [r.callerRegion, "all", ...extra.filter((g) => g.keep(r)).map((g) => g.key)];
    for (const k of keys) {
      const list = groups.get(`${phase}|${k}`) ?? [];
      list.push(v);
      groups.set(`${phase}|${k}`, list);
    }
  }
  const out = {} as Record<Phase, Record<string, number | null>>;
  for (const w of phases) {
    const row: Record<string, number | null> = {};
    for (const c of [...callerRegions, "all", ...extra.map((g) => g.key)]) {
      const v = groups.get(`${w.phase}|${c}`);
      row[c] = v === undefined || v.length === 0 ? null : round(percentile(v, p), 0);
    }
    out[w.phase] = row;
  }
  return out;
}

/** Requests sent and failed in each phase. */
export function errorsByPhase(
  records: readonly RequestRecord[],
  phases: readonly PhaseWindow[],
): Record<Phase, { requests: number; errors: number }> {
  const out = {} as Record<Phase, { requests: number; errors: number }>;
  for (const w of phases) out[w.phase] = { requests: 0, errors: 0 };
  for (const r of records) {
    const phase = phaseOf(phases, r.sentAtMs);
    if (phase === null) continue;
    out[phase].requests++;
    if (!answered(r)) out[phase].errors++;
  }
  return out;
}

function perMinute(times: readonly number[], w: PhaseWindow): number {
  const n = times.filter((t) => t >= w.startMs && t < w.endMs).length;
  return round(n / ((w.endMs - w.startMs) / 60_000), 2);
}

/** The failing region's callers whose tenants may be served anywhere: what its degradation and failure reach. */
export function unrestrictedGroup(f: Pick<FigureInputs, "failingRegion" | "residency">): TtftGroup {
  return {
    key: `${f.failingRegion} (no residency)`,
    keep: (r) => r.callerRegion === f.failingRegion && f.residency[r.tenant] === undefined,
  };
}

/**
 * Per bin of the pass, the requests of `streams`: how many, answered in `region`, answered elsewhere, failed.
 */
export function streamTimeline(
  records: readonly RequestRecord[],
  streams: readonly string[],
  region: string,
  binMs: number,
  endMs: number,
): TimelineBin[] {
  const bins: TimelineBin[] = [];
  for (let at = 0; at < endMs; at += binMs)
    bins.push({ atMs: at, requests: 0, inRegion: 0, elsewhere: 0, failed: 0 });
  for (const r of records) {
    if (!streams.includes(streamOf(r))) continue;
    const b = bins[Math.floor(r.sentAtMs / binMs)];
    if (b === undefined) continue;
    b.requests++;
    if (!answered(r)) b.failed++;
    else if (r.region === region) b.inRegion++;
    else b.elsewhere++;
  }
  return bins;
}

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

/** What a director decision log line says of one request, by its trace id. */
export interface DecisionFacts {
  readonly region: string | null;
  readonly retriedFrom: string | null;
  readonly reason: string | null;
  readonly status: string | null;
  /** When the decision was made, epoch ms: the line's time less the request's duration; null: unknown. */
  readonly atEpochMs: number | null;
  /** Each candidate region as the decision saw it: its filter, or `ok` when it passed. */
  readonly candidates: Readonly<Record<string, string>>;
}

/** The `director.decision` lines of a log (JSON lines; others skipped), by trace id. */
export function decisionsOf(logText: string): Map<string, DecisionFacts> {
  const out = new Map<string, DecisionFacts>();
  for (const line of logText.split("\n")) {
    if (!line.startsWith("{") || !line.includes('"director.decision"')) continue;
    let v: Record<string, unknown>;
    try {
      v = JSON.parse(line) as Record<string, unknown>;
    } catch {
      continue;
    }
    if (v.event !== "director.decision" || typeof v.trace_id !== "string") continue;
    const str = (x: unknown) => (typeof x === "string" ? x : null);
    const ts = typeof v.ts === "string" ? Date.parse(v.ts) : Number.NaN;
    const took = typeof v.latency_ms === "number" ? v.latency_ms : 0;
    const candidates: Record<string, string> = {};
    if (Array.isArray(v.candidates)) {
      for (const c of v.candidates as { region?: unknown; filtered?: unknown }[]) {
        if (typeof c.region === "string") candidates[c.region] = str(c.filtered) ?? "ok";
      }
    }
    out.set(v.trace_id, {
      region: str(v.region),
      retriedFrom: str(v.retried_from),
      reason: str(v.reason),
      status: str(v.status),
      atEpochMs: Number.isFinite(ts) ? ts - took : null,
      candidates,
    });
  }
  return out;
}

/** A stretch of time over which every decision saw a region the same way. */
export interface StateSpan {
  /** ms from the pass's start: the first and the last decision of the stretch. */
  readonly fromMs: number;
  readonly toMs: number;
  /** The region's filter in those decisions (`breaker_open`, `model_unavailable`, …), or `ok`. */
  readonly state: string;
  readonly decisions: number;
}

/**
 * How the director saw `region` over the pass: its candidate's filter in each decision, in decision
 * order, runs of the same state merged; decisions where it was filtered for `ignore` (residency: the
 * tenant, not the region) left out.
 */
export function regionStates(
  decisions: Iterable<DecisionFacts>,
  region: string,
  t0EpochMs: number,
  ignore: readonly string[] = ["residency"],
): StateSpan[] {
  const seen = [...decisions]
    .filter((d) => d.atEpochMs !== null && d.candidates[region] !== undefined)
    .map((d) => ({ at: d.atEpochMs! - t0EpochMs, state: d.candidates[region]! }))
    .filter((d) => !ignore.includes(d.state))
    .sort((a, b) => a.at - b.at);
  const out: { fromMs: number; toMs: number; state: string; decisions: number }[] = [];
  for (const d of seen) {
    const last = out.at(-1);
    if (last !== undefined && last.state === d.state) {
      last.toMs = d.at;
      last.decisions++;
    } else out.push({ fromMs: d.at, toMs: d.at, state: d.state, decisions: 1 });
  }
  return out.map((s) => ({ ...s, fromMs: Math.round(s.fromMs), toMs: Math.round(s.toMs) }));
}

/** The records with where each was first sent, from the director's decisions (by `<prefix>-<id>`). */
export function withFirstRegions(
  records: readonly RequestRecord[],
  decisions: ReadonlyMap<string, DecisionFacts>,
  tracePrefix: string,
): RequestRecord[] {
  return records.map((r) => {
    const d = decisions.get(`${tracePrefix}-${r.id}`);
    return d === undefined ? r : { ...r, firstRegion: d.retriedFrom ?? d.region };
  });
}
