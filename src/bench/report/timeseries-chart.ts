// queue-<router>.svg and kv-<router>.svg: an engine gauge per endpoint over the run, one line per
// endpoint, to show whether one engine's queue grows while the others idle.

import type { BenchResults, RouterResult, TimePoint } from "../results.js";
import { type LegendRow, renderChart, type Series } from "./chart-frame.js";
import { MAX_POINTS_PER_LINE, minMaxDownsample, type Point } from "./downsample.js";
import { type Axis, linearAxis } from "./scales.js";
import { DASHES, PALETTE } from "./svg-doc.js";

interface GaugeChart {
  title: string;
  y: (max: number) => Axis;
  /** Converts a recorded value to the y axis' unit. */
  scale: number;
  series: (r: RouterResult) => Record<string, TimePoint[]>;
  /** How the legend sums up one endpoint's line. */
  summary: (max: number) => string;
}

function gaugeChart(results: BenchResults, router: string, g: GaugeChart): string {
  const r = results.routers[router];
  const name = r?.topology ? `${router} (${r.topology})` : router;
  const data = r ? g.series(r) : {};
  const groups = new Map((r?.endpoints ?? []).map((e) => [e.endpoint, e.group]));
  const endpoints = Object.keys(data).sort();
  let maxT = r?.duration_s ?? 0;
  let maxV = 0;
  const series: Series[] = [];
  const legend: LegendRow[] = endpoints.length > 0 ? [{ kind: "heading", text: "Endpoint (group)" }] : [];
  endpoints.forEach((ep, i) => {
    const sorted = [...(data[ep] ?? [])].sort((a, b) => a.t_s - b.t_s);
    const points: Point[] = sorted.map((p) => [p.t_s, p.value * g.scale]);
    const epMax = points.reduce((m, p) => Math.max(m, p[1]), 0);
    maxT = points.reduce((m, p) => Math.max(m, p[0]), maxT);
    maxV = Math.max(maxV, epMax);
    // Colours first, then dashes, so more endpoints than colours still tell apart.
    const color = PALETTE[i % PALETTE.length]!;
    const dash = DASHES[Math.floor(i / PALETTE.length) % DASHES.length]!;
    series.push({ points: minMaxDownsample(points, MAX_POINTS_PER_LINE), color, dash });
    const group = groups.get(ep);
    legend.push({
      kind: "entry",
      color,
      dash,
      label: group ? `${ep} (${group})` : ep,
      note: g.summary(epMax),
    });
  });
  return renderChart({
    title: `${g.title} — ${name}`,
    subtitle: `${results.scenario} · seed ${results.seed} · ${results.quick ? "quick" : "full"} run · ${results.date}`,
    x: linearAxis("Time since the run started (s)", Math.max(maxT, 1), (v) => `${v}`),
    y: g.y(maxV),
    series,
    legend,
    emptyMessage: r ? "No samples were recorded for this router" : `No router named ${router} in this run`,
  });
}

/**
 * Engine waiting-queue depth per endpoint over time, for one router.
 * @example writeFileSync("queue-tokengate.svg", queueDepthChart(results, "tokengate"))
 */
export function queueDepthChart(results: BenchResults, router: string): string {
  return gaugeChart(results, router, {
    title: "Engine waiting queue",
    y: (max) => linearAxis("Requests waiting in the engine", Math.max(max, 1), (v) => `${v}`, 1),
    scale: 1,
    series: (r) => r.queue_depth,
    summary: (max) => `max ${Math.round(max)}`,
  });
}

/**
 * Engine KV-cache use per endpoint over time, for one router; recorded as a share in [0, 1].
 * @example writeFileSync("kv-tokengate.svg", kvUsageChart(results, "tokengate"))
 */
export function kvUsageChart(results: BenchResults, router: string): string {
  return gaugeChart(results, router, {
    title: "Engine KV-cache use",
    y: () => linearAxis("KV cache in use", 100, (v) => `${v}%`, 10),
    scale: 100,
    series: (r) => r.kv_usage,
    summary: (max) => `max ${max.toFixed(0)}%`,
  });
}
