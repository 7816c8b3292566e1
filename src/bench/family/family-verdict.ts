// The verdict over a family (issue 31's targets), from each workload's figures per router: tokengate
// against the best other router on TTFT P50, P90 and P99; against least-request's P90 where routing
// matters (the routers' P90s more than 20% apart); the bursting tenant's cost and the other tenants'
// P99 during bursts against least-request's; each router's worst case (its figure over the best
// router's, worst workload) and its mean rank per figure.

import type { FamilyFigures } from "./family-virtual.js";

export const FIGURES = ["p50", "p90", "p99"] as const;
export type Figure = (typeof FIGURES)[number];

/** tokengate ≤ this × the best other router's figure (issue 31: 1.0). */
export const BEST_OTHER_MAX = 1.0;
/** Where routing matters, tokengate's P90 ≤ this × least-request's. */
export const MATTERS_P90_MAX = 0.8;
/** Routing matters on a workload when the routers' P90s are more than this far apart (max/min). */
export const MATTERS_SPREAD = 1.2;
/** The bursting tenant pays at most this × what least-request makes it pay (its P90 in its bursts). */
export const BURST_PAYS_MAX = 1.2;
/** The other tenants' P99 during bursts, at most this × least-request's. */
export const OTHERS_P99_MAX = 0.7;

export interface WorkloadFigures {
  name: string;
  requests: number;
  routers: Record<string, FamilyFigures>;
}

export interface WorkloadVerdict {
  name: string;
  /** tokengate's figure over the best other router's. */
  toBestOther: Record<Figure, number>;
  /** The best other router per figure. */
  bestOther: Record<Figure, string>;
  /** Routers' P90 spread (max/min) and, where it is over MATTERS_SPREAD, tokengate's P90 over least-request's. */
  p90Spread: number;
  toLeastRequestP90: number | null;
  burstToLeastRequest: number | null;
  othersToLeastRequest: number | null;
  /** Every target this workload has met. */
  met: boolean;
}

export interface FamilyVerdict {
  workloads: WorkloadVerdict[];
  /** Per router and figure: the router's figure over the best router's, on its worst workload. */
  worst: Record<string, Record<Figure, { ratio: number; workload: string }>>;
  /** Per router and figure: its mean rank (1 best) over the workloads. */
  meanRank: Record<string, Record<Figure, number>>;
  /** Workloads meeting each target, of those it applies to. */
  counts: {
    bestOther: Record<Figure, { met: number; of: number }>;
    matters: { met: number; of: number };
    burst: { met: number; of: number };
    others: { met: number; of: number };
    all: { met: number; of: number };
  };
}

function ratio(a: number, b: number): number {
  return a / Math.max(1, b);
}

export function familyVerdict(results: readonly WorkloadFigures[], subject = "tokengate"): FamilyVerdict {
  const workloads: WorkloadVerdict[] = [];
  const routerNames = results.length > 0 ? Object.keys(results[0]!.routers) : [];
  const worst: FamilyVerdict["worst"] = {};
  const rankSum: Record<string, Record<Figure, number>> = {};
  for (const r of routerNames) rankSum[r] = { p50: 0, p90: 0, p99: 0 };
  for (const w of results) {
    const tg = w.routers[subject];
    if (!tg) throw new Error(`family verdict: ${w.name} has no ${subject} run`);
    const others = Object.entries(w.routers).filter(([n]) => n !== subject);
    const toBestOther = {} as Record<Figure, number>;
    const bestOther = {} as Record<Figure, string>;
    for (const f of FIGURES) {
      const [name, best] = others.reduce((a, b) => (b[1][f] < a[1][f] ? b : a));
      toBestOther[f] = ratio(tg[f], best[f]);
      bestOther[f] = name;
      const all = Object.entries(w.routers);
      const min = Math.min(...all.map(([, x]) => x[f]));
      const sorted = [...all].sort((a, b) => a[1][f] - b[1][f]);
      for (const [n, x] of all) {
        const rw = ratio(x[f], min);
        const prev = worst[n]?.[f];
        worst[n] ??= {} as Record<Figure, { ratio: number; workload: string }>;
        if (!prev || rw > prev.ratio) worst[n]![f] = { ratio: rw, workload: w.name };
        rankSum[n]![f] += sorted.findIndex(([m]) => m === n) + 1;
      }
    }
    const p90s = Object.values(w.routers).map((x) => x.p90);
    const p90Spread = ratio(Math.max(...p90s), Math.min(...p90s));
    const lr = w.routers["least-request"];
    const toLeastRequestP90 = lr && p90Spread > MATTERS_SPREAD ? ratio(tg.p90, lr.p90) : null;
    const burstToLeastRequest =
      lr && tg.burstP90 !== null && lr.burstP90 !== null ? ratio(tg.burstP90, lr.burstP90) : null;
    const othersToLeastRequest =
      lr && tg.othersDuringBurstP99 !== null && lr.othersDuringBurstP99 !== null
        ? ratio(tg.othersDuringBurstP99, lr.othersDuringBurstP99)
        : null;
    const met =
      FIGURES.every((f) => toBestOther[f] <= BEST_OTHER_MAX) &&
      (toLeastRequestP90 === null || toLeastRequestP90 <= MATTERS_P90_MAX) &&
      (burstToLeastRequest === null || burstToLeastRequest <= BURST_PAYS_MAX) &&
      (othersToLeastRequest === null || othersToLeastRequest <= OTHERS_P99_MAX);
    workloads.push({
      name: w.name,
      toBestOther,
      bestOther,
      p90Spread,
      toLeastRequestP90,
      burstToLeastRequest,
      othersToLeastRequest,
      met,
    });
  }
  const n = Math.max(1, results.length);
  const meanRank: FamilyVerdict["meanRank"] = {};
  for (const r of routerNames)
    meanRank[r] = { p50: rankSum[r]!.p50 / n, p90: rankSum[r]!.p90 / n, p99: rankSum[r]!.p99 / n };
  const count = (pick: (v: WorkloadVerdict) => number | null, max: number) => {
    const applies = workloads.map(pick).filter((x): x is number => x !== null);
    return { met: applies.filter((x) => x <= max).length, of: applies.length };
  };
  return {
    workloads,
    worst,
    meanRank,
    counts: {
      bestOther: {
        p50: count((v) => v.toBestOther.p50, BEST_OTHER_MAX),
        p90: count((v) => v.toBestOther.p90, BEST_OTHER_MAX),
        p99: count((v) => v.toBestOther.p99, BEST_OTHER_MAX),
      },
      matters: count((v) => v.toLeastRequestP90, MATTERS_P90_MAX),
      burst: count((v) => v.burstToLeastRequest, BURST_PAYS_MAX),
      others: count((v) => v.othersToLeastRequest, OTHERS_P99_MAX),
      all: { met: workloads.filter((v) => v.met).length, of: workloads.length },
    },
  };
}
