// The two stages of a region choice before any memory of past choices: the hard filters (a region either
// may take this request or says why not) and the weighted score of the regions left, each term in 0..1.

import type { BreakerPhase } from "./breaker.js";
import type { DirectorQuery, DirectorWeights, RegionCandidate, RegionSummary } from "./director-types.js";

/** Why a region cannot take a request, in the order the filters run. */
export type FilterReason =
  | "residency"
  | "stale_summary"
  | "draining"
  | "breaker_open"
  | "model_unavailable"
  | "no_headroom";

/** A region as the filters and the score read it. */
export interface RegionView {
  readonly name: string;
  readonly cost: number;
  /** The summary held, null when stale or never seen (stale ones are not read). */
  readonly summary: RegionSummary | null;
  readonly stale: boolean;
  readonly breaker: BreakerPhase;
  /** The caller's round trip to it, ms; null when the caller's region is unknown. */
  readonly rttMs: number | null;
}

/** A region after the filters. */
export interface Screened {
  readonly view: RegionView;
  /** The first filter it fails, null when it passes all. */
  readonly filtered: FilterReason | null;
  /** It fails only because its breaker is half-open: it may take a probe request. */
  readonly probeable: boolean;
  /** Its headroom for the model, 0..1 (0 without a summary). */
  readonly headroom: number;
}

/** The model (and pinned version) is ready in the summary. */
export function servesModel(summary: RegionSummary, q: Pick<DirectorQuery, "model" | "version">): boolean {
  const m = summary.models.find((x) => x.alias === q.model);
  if (!m?.ready) return false;
  return q.version === null || m.versions.some((v) => v.version === q.version && v.ready);
}

/**
 * Runs the hard filters on one region: residency (the tenant's allowed regions; null allows all), a stale
 * or missing summary, draining, an open or half-open breaker, the model (and version) not ready, no
 * headroom for it (≤ 0, or no entry).
 */
export function screen(
  view: RegionView,
  allowed: ReadonlySet<string> | null,
  q: Pick<DirectorQuery, "model" | "version">,
): Screened {
  const s = view.stale ? null : view.summary;
  const headroom = clamp01(s?.headroomByModel[q.model] ?? 0);
  const reasons: FilterReason[] = [];
  if (allowed !== null && !allowed.has(view.name)) reasons.push("residency");
  if (s === null) reasons.push("stale_summary");
  else if (s.draining) reasons.push("draining");
  if (view.breaker !== "closed") reasons.push("breaker_open");
  // No headroom is a shortage, not a failure: it is scored, and spillover moves the excess, but it does
  // not take the region out (one summary at 0 during a degrade moved a whole stream out and back).
  if (s !== null && !servesModel(s, q)) reasons.push("model_unavailable");
  const filtered = reasons[0] ?? null;
  const probeable = view.breaker === "half-open" && reasons.length === 1 && filtered === "breaker_open";
  return { view, filtered, probeable, headroom };
}

/** A region that passed the filters, with its score. */
export interface Scored {
  readonly screened: Screened;
  readonly score: number;
  readonly terms: { latency: number; headroom: number; errors: number; cost: number };
  /** Position in the config (the last tie-break). */
  readonly index: number;
}

/**
 * Scores regions that passed: weights.latency × (1 − rtt / the largest rtt among them; 1 for all when the
 * caller's region is unknown) + weights.headroom × headroom + weights.errors × (1 − min(1, errorRate /
 * errorRateToOpen)) + weights.cost × (the lowest cost among them / cost), over the sum of the weights.
 * Returns them best first: higher score, then lower cost, then config order.
 */
export function scoreRegions(
  passing: readonly { screened: Screened; index: number }[],
  weights: DirectorWeights,
  errorRateToOpen: number,
): Scored[] {
  const rtts = passing.map((p) => p.screened.view.rttMs).filter((r): r is number => r !== null);
  const maxRtt = rtts.length > 0 ? Math.max(...rtts) : 0;
  const minCost = Math.min(...passing.map((p) => p.screened.view.cost));
  const sum = weights.latency + weights.headroom + weights.errors + weights.cost;
  const out = passing.map(({ screened, index }): Scored => {
    const v = screened.view;
    const rtt = v.rttMs;
    const errorRate = v.summary?.window.errorRate ?? 0;
    const terms = {
      latency: rtt === null || maxRtt <= 0 ? 1 : 1 - rtt / maxRtt,
      headroom: screened.headroom,
      errors: 1 - Math.min(1, Math.max(0, errorRate) / errorRateToOpen),
      cost: v.cost === 0 ? 1 : minCost === 0 ? 0 : minCost / v.cost,
    };
    const weighted =
      weights.latency * terms.latency +
      weights.headroom * terms.headroom +
      weights.errors * terms.errors +
      weights.cost * terms.cost;
    return { screened, terms, index, score: sum > 0 ? weighted / sum : 0 };
  });
  return out.sort(
    (a, b) => b.score - a.score || a.screened.view.cost - b.screened.view.cost || a.index - b.index,
  );
}

/** The candidate list a decision reports: every configured region, in config order. */
export function candidateList(screened: readonly Screened[], scored: readonly Scored[]): RegionCandidate[] {
  const byName = new Map(scored.map((s) => [s.screened.view.name, s]));
  return screened.map((s): RegionCandidate => {
    const hit = byName.get(s.view.name);
    if (hit === undefined) {
      return {
        region: s.view.name,
        filtered: s.filtered ?? "not_scored",
        score: null,
        terms: { latency: null, headroom: null, errors: null, cost: null },
      };
    }
    return { region: s.view.name, filtered: null, score: hit.score, terms: { ...hit.terms } };
  });
}

function clamp01(x: number): number {
  return Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : 0;
}
