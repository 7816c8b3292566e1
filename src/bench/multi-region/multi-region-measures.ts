// The multi-region benchmark's measures, each over the requests as the callers saw them (what
// multi-region-figures.ts puts together per pass): the phases, the streams and their switches, the time
// until a share of a stream's traffic is served elsewhere, residency, TTFT and errors per phase. Pure.

import { percentile, round } from "../stats.js";
import type { Phase, PhaseWindow } from "./multi-region-scenario.js";

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

export function phaseWindow(phases: readonly PhaseWindow[], phase: Phase): PhaseWindow {
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

export function perMinute(times: readonly number[], w: PhaseWindow): number {
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
