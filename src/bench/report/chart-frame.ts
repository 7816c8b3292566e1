// One chart laid out and drawn: title, plot with grid and axes, lines clipped to the plot, guide lines,
// and a legend to the right sized to its longest label. The chart modules only say what to plot.

import type { Point } from "./downsample.js";
import type { Axis } from "./scales.js";
import { escapeXml, num, svgDocument, svgLine, svgText, textWidth } from "./svg-doc.js";

export interface Series {
  points: Point[];
  color: string;
  dash: string;
  /** Draw as a staircase (each value held until the next), as an empirical CDF is. */
  step?: boolean;
}

export type LegendRow =
  | { kind: "heading"; text: string; color?: string }
  | { kind: "entry"; color: string; dash: string; label: string; note?: string };

/** A labelled reference line: a target on the x axis, a percentile on the y axis. */
export interface Guide {
  axis: "x" | "y";
  value: number;
  label: string;
}

export interface ChartSpec {
  title: string;
  subtitle: string;
  x: Axis;
  y: Axis;
  series: Series[];
  legend: LegendRow[];
  guides?: Guide[];
  /** Shown in the plot when there is nothing to draw. */
  emptyMessage?: string;
  /** One line of explanation under the x axis. */
  footnote?: string;
}

const PAD = 16;
const PLOT_W = 640;
const PLOT_H = 400;
const PLOT_TOP = 72;
const ROW = 18;
const SAMPLE = 28;
const LINE_WIDTH = 1.8;
const GRID = "#e3e3e3";
const MINOR_GRID = "#f1f1f1";
const MUTED = "#666666";

export function renderChart(spec: ChartSpec): string {
  const yLabelWidth = Math.max(...spec.y.ticks.map((t) => textWidth(t.label, 11)), 0);
  const left = PAD + 22 + yLabelWidth + 8;
  const right = left + PLOT_W;
  const bottom = PLOT_TOP + PLOT_H;
  const px = (v: number) => left + spec.x.toUnit(v) * PLOT_W;
  const py = (v: number) => bottom - spec.y.toUnit(v) * PLOT_H;

  const legendX = right + 28;
  const legendWidth = Math.max(0, ...spec.legend.map(legendRowWidth));
  const legendBottom = PLOT_TOP + spec.legend.length * ROW;
  const footY = bottom + 62;
  const width = Math.max(legendX + legendWidth + PAD, textWidth(spec.title, 16) + 2 * PAD);
  const height = Math.max(spec.footnote ? footY + PAD : bottom + 56, legendBottom + PAD);

  const body = [
    svgText(PAD, 30, spec.title, { size: 16, weight: "bold" }),
    svgText(PAD, 50, spec.subtitle, { size: 12, fill: MUTED }),
    ...grid(spec, left, right, bottom, px, py),
    `<clipPath id="plot-area"><rect x="${num(left)}" y="${PLOT_TOP}" width="${PLOT_W}" height="${PLOT_H}"/></clipPath>`,
    ...(spec.guides ?? []).map((g) => guide(g, left, right, bottom, px, py)),
    `<g clip-path="url(#plot-area)" fill="none" stroke-width="${LINE_WIDTH}" stroke-linejoin="round">`,
    ...spec.series.filter((s) => s.points.length > 0).map((s) => seriesPath(s, px, py)),
    `</g>`,
    `<rect x="${num(left)}" y="${PLOT_TOP}" width="${PLOT_W}" height="${PLOT_H}" fill="none" stroke="#888888"/>`,
    svgText((left + right) / 2, bottom + 40, spec.x.title, { size: 13, anchor: "middle" }),
    svgText(PAD + 12, PLOT_TOP + PLOT_H / 2, spec.y.title, { size: 13, anchor: "middle", rotate: -90 }),
    ...legend(spec.legend, legendX),
  ];
  if (spec.emptyMessage && spec.series.every((s) => s.points.length === 0)) {
    body.push(
      svgText((left + right) / 2, PLOT_TOP + PLOT_H / 2, spec.emptyMessage, {
        anchor: "middle",
        fill: MUTED,
      }),
    );
  }
  if (spec.footnote) body.push(svgText(PAD, footY, spec.footnote, { size: 11, fill: MUTED }));
  return svgDocument(width, height, spec.title, body);
}

function grid(
  spec: ChartSpec,
  left: number,
  right: number,
  bottom: number,
  px: (v: number) => number,
  py: (v: number) => number,
): string[] {
  const out: string[] = [];
  for (const v of spec.x.minor) out.push(svgLine(px(v), PLOT_TOP, px(v), bottom, MINOR_GRID));
  for (const v of spec.y.minor) out.push(svgLine(left, py(v), right, py(v), MINOR_GRID));
  for (const t of spec.x.ticks) {
    out.push(svgLine(px(t.value), PLOT_TOP, px(t.value), bottom + 5, GRID));
    out.push(svgText(px(t.value), bottom + 19, t.label, { size: 11, anchor: "middle" }));
  }
  for (const t of spec.y.ticks) {
    out.push(svgLine(left - 5, py(t.value), right, py(t.value), GRID));
    out.push(svgText(left - 8, py(t.value) + 4, t.label, { size: 11, anchor: "end" }));
  }
  return out;
}

function guide(
  g: Guide,
  left: number,
  right: number,
  bottom: number,
  px: (v: number) => number,
  py: (v: number) => number,
): string {
  const style = `stroke-dasharray="3 3"`;
  if (g.axis === "x") {
    const x = px(g.value);
    if (x < left || x > right) return "";
    // Above the plot, where no line can run through it.
    const half = textWidth(g.label, 11) / 2;
    const lx = Math.min(Math.max(x, left + half), right - half);
    const label = svgText(lx, PLOT_TOP - 6, g.label, { size: 11, anchor: "middle", fill: MUTED });
    return `${svgLine(x, PLOT_TOP - 2, x, bottom, "#999999", style)}\n${label}`;
  }
  const y = py(g.value);
  return `${svgLine(left, y, right, y, "#999999", style)}\n${svgText(left + 4, y - 3, g.label, { size: 11, fill: MUTED })}`;
}

function seriesPath(s: Series, px: (v: number) => number, py: (v: number) => number): string {
  const [first, ...rest] = s.points;
  let d = `M${num(px(first![0]))} ${num(py(first![1]))}`;
  for (const [x, y] of rest) d += s.step ? `H${num(px(x))}V${num(py(y))}` : `L${num(px(x))} ${num(py(y))}`;
  const dash = s.dash ? ` stroke-dasharray="${s.dash}"` : "";
  return `<path class="series" d="${d}" stroke="${s.color}"${dash}/>`;
}

function legendRowWidth(row: LegendRow): number {
  if (row.kind === "heading") return textWidth(row.text, 12) * 1.08; // bold runs wider
  const note = row.note ? 6 + textWidth(row.note, 11) : 0;
  return SAMPLE + 8 + textWidth(row.label, 12) + note;
}

function legend(rows: LegendRow[], x: number): string[] {
  return rows.map((row, i) => {
    const y = PLOT_TOP + i * ROW + 12;
    if (row.kind === "heading") {
      return svgText(x, y, row.text, { size: 12, weight: "bold", fill: row.color ?? "#222" });
    }
    const dash = row.dash ? `stroke-dasharray="${row.dash}" ` : "";
    const sample = svgLine(
      x,
      y - 4,
      x + SAMPLE,
      y - 4,
      row.color,
      `${dash}stroke-width="${LINE_WIDTH + 0.4}"`,
    );
    const note = row.note
      ? `<tspan dx="6" fill="${MUTED}" font-size="11">${escapeXml(row.note)}</tspan>`
      : "";
    return `${sample}\n<text x="${num(x + SAMPLE + 8)}" y="${num(y)}" font-size="12" fill="#222">${escapeXml(row.label)}${note}</text>`;
  });
}
