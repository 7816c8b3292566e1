// The director's side of the multi-region benchmark, from its log: each request's decision by trace id
// (region, retry, reason, candidates) and, from the candidates, each region's state over time. Pure.

import type { RequestRecord } from "./multi-region-measures.js";

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
