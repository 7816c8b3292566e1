// ttft-cdf.svg: the distribution of time to first token, one empirical CDF per router × request class,
// from the per-request samples. Colour says the router, dash style the class.

import type { BenchResults, RouterResult } from "../results.js";
import { SEED_004_TARGETS } from "./acceptance-targets.js";
import { type ChartSpec, type Guide, type LegendRow, renderChart, type Series } from "./chart-frame.js";
import { cdfPoints, MAX_POINTS_PER_LINE } from "./downsample.js";
import { formatCount } from "./format.js";
import { orderClasses } from "./request-classes.js";
import { latencyTickLabel, linearAxis, logAxis, niceCeil } from "./scales.js";
import { DASHES, PALETTE } from "./svg-doc.js";

/** The axis starts here: faster first tokens are drawn at its left edge. */
const MIN_MS = 10;

type Sample = NonNullable<RouterResult["samples"]>[number];

interface Curve {
  router: string;
  cls: string;
  ttfts: number[];
  failed: number;
  /** Succeeded without a TTFT (e.g. a non-streamed reply); not on the curve either. */
  noTtft: number;
}

/** Routers that ran and recorded samples, in the order of the results; colours follow this order. */
function chartedRouters(results: BenchResults): [string, RouterResult][] {
  return Object.entries(results.routers).filter(([, r]) => r.status === "ok" && (r.samples?.length ?? 0) > 0);
}

function curves(name: string, samples: Sample[]): Curve[] {
  return orderClasses(samples.map((s) => s.cls)).map((cls) => {
    const mine = samples.filter((s) => s.cls === cls);
    const ok = mine.filter((s) => s.ok);
    return {
      router: name,
      cls,
      ttfts: ok.flatMap((s) => (s.ttft_ms === null ? [] : [s.ttft_ms])),
      failed: mine.length - ok.length,
      noTtft: ok.filter((s) => s.ttft_ms === null).length,
    };
  });
}

function curveNote(c: Curve): string {
  const parts = [`n=${formatCount(c.ttfts.length)}`];
  if (c.failed > 0) parts.push(`${c.failed} failed`);
  if (c.noTtft > 0) parts.push(`${c.noTtft} without TTFT`);
  return parts.join(", ");
}

/**
 * TTFT distribution per router and request class as a standalone SVG.
 * @example writeFileSync("ttft-cdf.svg", ttftChart(results))
 */
export function ttftChart(results: BenchResults): string {
  const routers = chartedRouters(results);
  const classOrder = orderClasses(routers.flatMap(([, r]) => (r.samples ?? []).map((s) => s.cls)));
  const series: Series[] = [];
  const legend: LegendRow[] = [];
  let maxMs = 0;
  routers.forEach(([name, r], i) => {
    const color = PALETTE[i % PALETTE.length]!;
    legend.push({ kind: "heading", text: r.topology ? `${name} (${r.topology})` : name, color });
    for (const c of curves(name, r.samples ?? [])) {
      const dash = DASHES[classOrder.indexOf(c.cls) % DASHES.length]!;
      // A staircase takes two vertices per point, plus the start on the x axis.
      const points = cdfPoints(c.ttfts, MAX_POINTS_PER_LINE / 2 - 1);
      // Start each staircase on the x axis, so the first step up is drawn.
      if (points.length > 0) points.unshift([points[0]![0], 0]);
      series.push({
        points: points.map(([x, y]) => [Math.max(x, MIN_MS), y * 100]),
        color,
        dash,
        step: true,
      });
      legend.push({ kind: "entry", color, dash, label: c.cls, note: curveNote(c) });
      for (const t of c.ttfts) if (t > maxMs) maxMs = t;
    }
  });

  const liveTarget = SEED_004_TARGETS.find((t) => t.key === "live_ttft_p95_ms")!.target;
  const guides: Guide[] = [
    { axis: "y", value: 50, label: "P50" },
    { axis: "y", value: 95, label: "P95" },
    { axis: "x", value: liveTarget, label: `seed 004 live P95 target ${latencyTickLabel(liveTarget)}` },
  ];
  const spec: ChartSpec = {
    title: `Time to first token — ${results.scenario}`,
    subtitle: `Empirical CDF per router and request class · seed ${results.seed} · ${results.quick ? "quick" : "full"} run · ${results.date}`,
    // Reach past the live target even when every request beat it, so the reader sees by how much.
    x: logAxis(
      "Time to first token (log scale)",
      MIN_MS,
      niceCeil(Math.max(maxMs, liveTarget)),
      latencyTickLabel,
    ),
    y: linearAxis("Requests with TTFT ≤ x", 100, (v) => `${v}%`, 10),
    series,
    legend,
    guides,
    emptyMessage: "No per-request samples were recorded",
    footnote:
      "Failed requests are left out of the curves; the legend counts them. TTFT below 10 ms is drawn at 10 ms.",
  };
  return renderChart(spec);
}
