// family.md: a family's verdict as a person reads it — the targets and how many workloads met each,
// every router's worst case and mean rank, then one row per workload with every router's TTFT.

import { formatMs } from "../report/format.js";
import { figuresRight, mdTable } from "../report/md-table.js";
import {
  BEST_OTHER_MAX,
  BURST_PAYS_MAX,
  type FamilyVerdict,
  FIGURES,
  MATTERS_P90_MAX,
  MATTERS_SPREAD,
  OTHERS_P99_MAX,
  type WorkloadFigures,
} from "./family-verdict.js";

export interface FamilyReportHeader {
  /** What ran: "virtual time" or "over HTTP, median of 3 rounds". */
  mode: string;
  seed: number;
  n: number;
  quick: boolean;
  /** Lines said under the title (what the mode leaves out, say). */
  notes: readonly string[];
}

/** Issue 31: the gateway's TTFT prediction error P90 at most this, %. */
export const PREDICTION_P90_MAX_PCT = 35;

/** The TTFT prediction's row, where the workloads carry it (virtual time; not over HTTP). */
function predictionRow(results: readonly WorkloadFigures[]): string[][] {
  const errors = results
    .map((w) => w.routers.tokengate?.predictionP90)
    .filter((e): e is number => typeof e === "number");
  if (errors.length === 0) return [];
  const met = errors.filter((e) => e <= PREDICTION_P90_MAX_PCT).length;
  const sorted = [...errors].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)]!;
  return [
    [
      `tokengate's TTFT prediction error P90 ≤ ${PREDICTION_P90_MAX_PCT}% (from dispatch; median ${median.toFixed(0)}%, worst ${sorted[sorted.length - 1]!.toFixed(0)}%; not in "all")`,
      `${met} of ${errors.length}`,
    ],
  ];
}

const x2 = (v: number | null) => (v === null ? "—" : `${v.toFixed(2)}×`);

export function renderFamilyReport(
  h: FamilyReportHeader,
  results: readonly WorkloadFigures[],
  v: FamilyVerdict,
): string {
  const routers = results.length > 0 ? Object.keys(results[0]!.routers) : [];
  const c = v.counts;
  const frac = (k: { met: number; of: number }) => `${k.met} of ${k.of}`;
  const targets = mdTable(
    ["Target", "Workloads that met it"],
    [
      [`TTFT P50 ≤ ${BEST_OTHER_MAX.toFixed(1)}× the best other router's`, frac(c.bestOther.p50)],
      [`TTFT P90 ≤ ${BEST_OTHER_MAX.toFixed(1)}× the best other router's`, frac(c.bestOther.p90)],
      [`TTFT P99 ≤ ${BEST_OTHER_MAX.toFixed(1)}× the best other router's`, frac(c.bestOther.p99)],
      [
        `Where the routers' P90s are more than ${Math.round((MATTERS_SPREAD - 1) * 100)}% apart: P90 ≤ ${MATTERS_P90_MAX}× least-request's`,
        frac(c.matters),
      ],
      [`The bursting tenant's P90 in its bursts ≤ ${BURST_PAYS_MAX}× least-request's`, frac(c.burst)],
      [`The other tenants' P99 during bursts ≤ ${OTHERS_P99_MAX}× least-request's`, frac(c.others)],
      ["All of the above", frac(c.all)],
      ...predictionRow(results),
    ],
    figuresRight(2),
  );
  const worstHead = [
    "Router",
    ...FIGURES.map((f) => `Worst ${f.toUpperCase()} / best`),
    ...FIGURES.map((f) => `Mean rank ${f.toUpperCase()}`),
  ];
  const worstRows = routers.map((r) => [
    r,
    ...FIGURES.map((f) => {
      const w = v.worst[r]?.[f];
      return w ? `${x2(w.ratio)} (${w.workload.split("-")[0]})` : "—";
    }),
    ...FIGURES.map((f) => (v.meanRank[r]?.[f] ?? Number.NaN).toFixed(2)),
  ]);
  const perHead = ["Workload", "Requests", ...routers, "tokengate / best other (P50, P90, P99)", "Met"];
  const perRows = results.map((w, i) => {
    const wv = v.workloads[i]!;
    return [
      w.name,
      String(w.requests),
      ...routers.map((r) => {
        const f = w.routers[r]!;
        return `${formatMs(f.p50)} / ${formatMs(f.p90)} / ${formatMs(f.p99)}`;
      }),
      FIGURES.map((f) => `${x2(wv.toBestOther[f])} (${wv.bestOther[f]})`).join(", "),
      wv.met ? "✓" : "✗",
    ];
  });
  return [
    `# Workload family: ${h.n} workloads, seed ${h.seed}${h.quick ? " (quick)" : ""}, ${h.mode}`,
    h.notes.map((n) => `- ${n}`).join("\n"),
    `## Targets\n\n${targets}`,
    `## Every router's worst case and mean rank\n\nWorst: the router's figure over the best router's on that workload, on its worst workload. Rank 1: the best router on that figure.\n\n${mdTable(worstHead, worstRows, figuresRight(worstHead.length))}`,
    `## Per workload\n\nTTFT P50 / P90 / P99 per router.\n\n${mdTable(perHead, perRows, figuresRight(perHead.length))}`,
  ]
    .filter((s) => s !== "")
    .join("\n\n")
    .concat("\n");
}
