// Axis scales and their ticks: linear for time, queue depth and percentages, log10 for latency.

export interface Tick {
  value: number;
  label: string;
}

export interface Axis {
  title: string;
  /** Maps a data value to [0, 1] along the axis (values outside the domain map outside it). */
  toUnit(value: number): number;
  ticks: Tick[];
  /** Unlabelled grid lines between ticks (the 2…9 of a log decade). */
  minor: number[];
}

/** The smallest of 1, 2, 5 × 10^k that is ≥ x, so an axis ends on a round figure. */
export function niceCeil(x: number): number {
  if (!(x > 0)) return 1;
  const decade = 10 ** Math.floor(Math.log10(x));
  for (const m of [1, 2, 5, 10]) if (m * decade >= x * (1 - 1e-12)) return m * decade;
  return 10 * decade;
}

/** A tick step giving five to seven ticks over [0, max], a round figure, at least `minStep`. */
export function niceStep(max: number, minStep = 0): number {
  const raw = Math.max(max / 6, minStep, Number.MIN_VALUE);
  const decade = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * decade >= raw) return Math.max(m * decade, minStep);
  return 10 * decade;
}

export function linearAxis(title: string, max: number, label: (v: number) => string, minStep = 0): Axis {
  const step = niceStep(max, minStep);
  const top = Math.max(step, Math.ceil(max / step - 1e-9) * step);
  const ticks: Tick[] = [];
  for (let i = 0; i * step <= top + step * 1e-9; i++) {
    const value = Number((i * step).toPrecision(12)); // 0.6, not 0.6000000000000001
    ticks.push({ value, label: label(value) });
  }
  return { title, toUnit: (v) => v / top, ticks, minor: [] };
}

/** Log10 axis over [min, max]; labelled at each decade, minor grid lines at 2…9 of each decade. */
export function logAxis(title: string, min: number, max: number, label: (v: number) => string): Axis {
  const lo = Math.log10(min);
  const span = Math.log10(max) - lo;
  const ticks: Tick[] = [];
  const minor: number[] = [];
  for (let d = 10 ** Math.floor(lo); d <= max * (1 + 1e-9); d *= 10) {
    if (d >= min * (1 - 1e-9)) ticks.push({ value: d, label: label(d) });
    for (let m = 2; m <= 9; m++) if (m * d > min && m * d < max) minor.push(m * d);
  }
  // Label an axis that ends between decades (at 2 s, say) at its end, unless a decade label sits close by.
  const last = ticks.at(-1)?.value ?? min;
  if (Math.log10(max / last) >= 0.25) ticks.push({ value: max, label: label(max) });
  return { title, toUnit: (v) => (Math.log10(Math.max(v, Number.MIN_VALUE)) - lo) / span, ticks, minor };
}

/** Tick labels for milliseconds on a latency axis: 10 ms, 100 ms, 1 s, 10 s, 100 s. */
export function latencyTickLabel(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${ms / 1000} s`;
}
