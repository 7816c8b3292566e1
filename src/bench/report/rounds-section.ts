// report.md's repeated rounds (`tokengate bench --repeat n`): each router's TTFT per round, and issue
// 13's targets judged on the median of the rounds' ratios — each ratio taken side by side within its
// round, the spread showing how much one round's verdict owes to the machine's noise.

import type { BenchResults, RoundResult, RouterResult } from "../results.js";
import { formatMs, formatNumber } from "./format.js";
import { figuresRight, mdTable } from "./md-table.js";
import { PREDICTION_P50_BELOW_PCT } from "./prediction-section.js";
import { BURST_P99_AT_MOST, isRouter, PREFILL_TARGETS, ratioOf, times } from "./prefill-targets.js";

/** The median of the finite values (the mean of the middle two for an even count); null for none. */
export function median(values: readonly (number | null)[]): number | null {
  const v = values.filter((x): x is number => x !== null && Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return null;
  const mid = Math.floor(v.length / 2);
  return v.length % 2 === 1 ? v[mid]! : (v[mid - 1]! + v[mid]!) / 2;
}

const ok = (r: RouterResult | undefined): r is RouterResult => r?.status === "ok";

/** One row per judged figure: a cell per round, the median and its verdict, the rounds that met it. */
interface Judged {
  label: string;
  target: string;
  /** The round's cell text and the value judged (a ratio or a percentage). */
  cell(round: RoundResult): { text: string; value: number | null };
  /** Met when the value is at most this (`below`: strictly under it). */
  bound: number;
  below?: boolean;
}

function judge(value: number | null, j: Judged): string | null {
  if (value === null) return null;
  return (j.below ? value < j.bound : value <= j.bound) ? "met" : "not met";
}

function judgedRows(tgName: string, baseName: string | null, results: BenchResults): Judged[] {
  const rows: Judged[] = [];
  if (results.prefill_targets && baseName) {
    for (const t of PREFILL_TARGETS) {
      rows.push({
        label: t.label,
        target: `≤ ${formatNumber(t.atMost, 1)}× least-request`,
        bound: t.atMost,
        cell: (round) => {
          const mine = round.routers[tgName];
          const base = round.routers[baseName];
          if (!ok(mine) || !ok(base)) return { text: "n/a", value: null };
          const ratio = ratioOf(t.figure(mine), t.figure(base));
          return {
            text: `${formatMs(t.figure(mine))} / ${formatMs(t.figure(base))} (${times(ratio, t.atMost)})`,
            value: ratio,
          };
        },
      });
    }
  }
  const burst = (pick: "p99_ratio" | "p99_ratio_before", label: string): Judged => ({
    label,
    target: `≤ ${BURST_P99_AT_MOST}×`,
    bound: BURST_P99_AT_MOST,
    cell: (round) => {
      const b = round.routers[tgName]?.burst_isolation;
      if (!b) return { text: "n/a", value: null };
      const other = pick === "p99_ratio" ? b.quiet_without : b.quiet_before;
      return {
        text: `${formatMs(b.quiet_during.ttft_ms.p99)} / ${formatMs(other.ttft_ms.p99)} (${times(b[pick], BURST_P99_AT_MOST)})`,
        value: b[pick],
      };
    },
  });
  if (results.routers[tgName]?.burst_isolation) {
    rows.push(burst("p99_ratio", "Quiet tenants' P99 during the burst / without it"));
    rows.push(burst("p99_ratio_before", "Quiet tenants' P99 during the burst / before it"));
  }
  if (results.routers[tgName]?.prediction_error) {
    rows.push({
      label: "TTFT prediction error P50",
      target: `< ${PREDICTION_P50_BELOW_PCT}%`,
      bound: PREDICTION_P50_BELOW_PCT,
      below: true,
      cell: (round) => {
        const p = round.routers[tgName]?.prediction_error?.relative_pct.p50 ?? null;
        return { text: p === null ? "n/a" : `${formatNumber(p, 1)}%`, value: p };
      },
    });
  }
  return rows;
}

function targetsTable(tgName: string, baseName: string | null, results: BenchResults): string {
  const rounds = results.rounds!;
  const judged = judgedRows(tgName, baseName, results);
  if (judged.length === 0) return "";
  const head = [
    "Figure",
    "Target",
    ...rounds.map((r) => `Round ${r.round}`),
    "Median",
    "Verdict (median)",
    "Rounds met",
  ];
  const rows = judged.map((j) => {
    const cells = rounds.map((r) => j.cell(r));
    const values = cells.map((c) => c.value);
    const mid = median(values);
    const met = values.filter((v) => judge(v, j) === "met").length;
    const shown = j.below ? (mid === null ? "n/a" : `${formatNumber(mid, 1)}%`) : times(mid, j.bound);
    return [
      j.label,
      j.target,
      ...cells.map((c) => c.text),
      shown,
      judge(mid, j) ?? "n/a",
      `${met} of ${values.filter((v) => v !== null).length}`,
    ];
  });
  return mdTable(head, rows, figuresRight(head.length, 2));
}

function ttftTable(rounds: readonly RoundResult[], names: readonly string[]): string {
  const head = ["Router", "Figure", ...rounds.map((r) => `Round ${r.round}`), "Median"];
  const rows: string[][] = [];
  for (const name of names) {
    for (const q of ["p50", "p90", "p99"] as const) {
      const values = rounds.map((r) => {
        const x = r.routers[name];
        return ok(x) ? (x.overall?.ttft_ms[q] ?? null) : null;
      });
      rows.push([name, `TTFT ${q.toUpperCase()}`, ...values.map(formatMs), formatMs(median(values))]);
    }
  }
  return mdTable(head, rows, figuresRight(head.length, 2));
}

export function roundsSection(results: BenchResults): string {
  const rounds = results.rounds;
  if (!rounds || rounds.length < 2) return "";
  const names = Object.keys(results.routers).filter((n) => ok(results.routers[n]));
  const order = rounds.map((r) => `round ${r.round}: ${r.order.join(", ")}`).join("; ");
  const parts = [
    "## Repeated rounds",
    `The same trace ${rounds.length} times, the routers' order alternating (${order}). Every figure ` +
      "above is round 1's; here each round's, all requests, client-side.",
    ttftTable(rounds, names),
  ];
  const baseName = names.find((n) => isRouter(n, "least-request")) ?? null;
  for (const tg of names.filter((n) => isRouter(n, "tokengate"))) {
    const table = targetsTable(tg, baseName, results);
    if (table === "") continue;
    parts.push(
      `### ${tg}: the targets over the rounds\n\nEach cell is tokengate's figure / the other's in that ` +
        "round (least-request's for the ratios, the quiet tenants' own P99 without the burst or before " +
        "it for the burst rows) and their ratio. The verdict judges the median of the rounds' ratios; " +
        "the last column counts the rounds that met the target on their own.",
      table,
    );
  }
  return parts.join("\n\n");
}
