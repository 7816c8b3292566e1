// Histogram metric: fixed buckets, per-bucket counts kept non-cumulative so observe is one increment;
// exposition makes them cumulative (`_bucket{le=…}`, `+Inf`, `_sum`, `_count`).

import { MetricFamily, MetricsError } from "./family.js";
import { type ExpositionStyle, renderSeries } from "./format.js";
import type { HistogramBucket } from "./prom-parse.js";

/** client_golang's and prometheus_client's default buckets (seconds). */
export const DEFAULT_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export class HistogramChild {
  /** Observations per bucket, not cumulative; the last slot is the `+Inf` bucket. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    private readonly bounds: Float64Array,
    /** Pre-rendered `name_bucket{…,le="…"}` for each bucket, then `_sum` and `_count` series. */
    readonly bucketSeries: readonly string[],
    readonly sumSeries: string,
    readonly countSeries: string,
  ) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(v: number): void {
    const b = this.bounds;
    // First bound >= v (bounds are inclusive upper limits); NaN falls through to +Inf, as in client_golang.
    let lo = 0;
    let hi = b.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (v <= b[mid]!) hi = mid;
      else lo = mid + 1;
    }
    this.counts[lo] = this.counts[lo]! + 1;
    this.sum += v;
    this.count++;
  }

  /** Cumulative buckets including `+Inf`, the shape `histogramQuantile` takes. */
  buckets(): HistogramBucket[] {
    const out: HistogramBucket[] = [];
    let acc = 0;
    for (let i = 0; i < this.counts.length; i++) {
      acc += this.counts[i]!;
      out.push({ le: i < this.bounds.length ? this.bounds[i]! : Number.POSITIVE_INFINITY, count: acc });
    }
    return out;
  }

  zero(): void {
    this.counts.fill(0);
    this.sum = 0;
    this.count = 0;
  }
}

export class Histogram extends MetricFamily<HistogramChild> {
  readonly type = "histogram";
  readonly buckets: readonly number[];
  private readonly bounds: Float64Array;
  private readonly leText: readonly string[];

  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    buckets: readonly number[],
    style: ExpositionStyle,
  ) {
    super(name, help, labelNames, style);
    if (labelNames.includes("le")) {
      throw new MetricsError("TG_METRICS_INVALID_LABEL_NAME", `${name}: "le" is reserved for buckets`);
    }
    this.buckets = checkBuckets(name, buckets);
    this.bounds = Float64Array.from(this.buckets);
    this.leText = [...this.buckets.map(style.formatValue), "+Inf"];
    this.init();
  }

  observe(v: number): void {
    this.soloChild.observe(v);
  }

  protected createChild(labelValues: readonly string[]): HistogramChild {
    const names = [...this.labelNames, "le"];
    const bucketSeries = this.leText.map((le) =>
      renderSeries(`${this.name}_bucket`, names, [...labelValues, le], this.style),
    );
    return new HistogramChild(
      this.bounds,
      bucketSeries,
      renderSeries(`${this.name}_sum`, this.labelNames, labelValues, this.style),
      renderSeries(`${this.name}_count`, this.labelNames, labelValues, this.style),
    );
  }

  protected renderChildren(): string {
    const fmt = this.style.formatValue;
    let out = "";
    for (const c of this.children.values()) {
      let acc = 0;
      for (let i = 0; i < c.counts.length; i++) {
        acc += c.counts[i]!;
        out += `${c.bucketSeries[i]} ${fmt(acc)}\n`;
      }
      const sum = `${c.sumSeries} ${fmt(c.sum)}\n`;
      const count = `${c.countSeries} ${fmt(c.count)}\n`;
      out += this.style.countBeforeSum ? count + sum : sum + count;
    }
    return out;
  }
}

function checkBuckets(name: string, buckets: readonly number[]): number[] {
  const finite = buckets.at(-1) === Number.POSITIVE_INFINITY ? buckets.slice(0, -1) : [...buckets];
  const ok =
    finite.length > 0 && finite.every((b, i) => Number.isFinite(b) && (i === 0 || b > finite[i - 1]!));
  if (!ok) {
    throw new MetricsError(
      "TG_METRICS_INVALID_BUCKETS",
      `${name}: buckets must be finite and strictly increasing (+Inf is implied), got [${buckets.join(", ")}]`,
    );
  }
  return finite;
}
