// How the report writes figures: durations, rates and counts, the same in every table and chart.

/** Below this, durations stay in whole milliseconds so targets like 1.8 s are not blurred by rounding. */
const MS_DISPLAY_LIMIT = 10_000;

/** `742 ms` below 10 s, `18.0 s` from there; `n/a` for a missing figure. */
export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return "n/a";
  const whole = Math.round(ms);
  if (whole < MS_DISPLAY_LIMIT) return `${whole} ms`;
  return `${(ms / 1000).toFixed(1)} s`;
}

/** A share in [0, 1] as a percentage with one decimal: `94.1%`. */
export function formatRate(rate: number | null | undefined): string {
  if (rate === null || rate === undefined || !Number.isFinite(rate)) return "n/a";
  // Round in decimal, not toFixed's binary: 0.0785 should read 7.9%, not 7.8%.
  return `${(Math.round(rate * 1000) / 10).toFixed(1)}%`;
}

/** A plain figure with a fixed number of decimals, `n/a` when missing. */
export function formatNumber(x: number | null | undefined, digits = 1): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return "n/a";
  return x.toFixed(digits);
}

/** Text for one Markdown table cell: pipes would split the cell and newlines would end the row. */
export function mdCell(text: string): string {
  return text.replace(/\\/g, "\\\\").replace(/\|/g, "\\|").replace(/\r?\n/g, " ");
}

/** A count with thousands separators: `756,000`. */
export function formatCount(n: number): string {
  return Number.isFinite(n) ? Math.round(n).toLocaleString("en-US") : "n/a";
}
