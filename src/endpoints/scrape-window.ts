// What two successive scrapes of an engine imply that one cannot: its prefix-cache hit rate and its TTFT
// p95 over the window between them, from counters and a histogram that only ever grow (until the
// engine restarts).

import { type HistogramBucket, histogramQuantile, subtractBuckets } from "../telemetry/prom-parse.js";
import type { EngineReading } from "./dialects.js";

export interface WindowRates {
  /** Prefix-cache hits / queries (tokens) in the window; null with no queries. */
  readonly prefixCacheHitRate: number | null;
  /** p95 TTFT of requests finished in the window; null with none. */
  readonly ttftP95Seconds: number | null;
  /** How many TTFT observations that p95 rests on. */
  readonly ttftWindowCount: number;
}

export class ScrapeWindow {
  private prevPrefixHits: number | null = null;
  private prevPrefixQueries: number | null = null;
  private prevTtft: HistogramBucket[] | null = null;

  /** The rates between the previous successful scrape and `r`, which becomes the previous one. */
  apply(r: EngineReading): WindowRates {
    const prefixCacheHitRate = this.prefixRate(r);
    this.prevPrefixHits = r.prefixHits;
    this.prevPrefixQueries = r.prefixQueries;
    const ttft = this.ttft(r.ttftBuckets);
    return { prefixCacheHitRate, ...ttft };
  }

  private prefixRate(r: EngineReading): number | null {
    const hits = r.prefixHits;
    const queries = r.prefixQueries;
    if (hits === null || queries === null) return r.prefixHitRateGauge;
    if (this.prevPrefixHits === null || this.prevPrefixQueries === null) return null;
    let dh = hits - this.prevPrefixHits;
    let dq = queries - this.prevPrefixQueries;
    // A counter that went down means the engine restarted: what it shows now is all since then.
    if (dh < 0 || dq < 0) {
      dh = hits;
      dq = queries;
    }
    return dq > 0 ? Math.min(1, dh / dq) : null;
  }

  private ttft(buckets: HistogramBucket[] | null): {
    ttftP95Seconds: number | null;
    ttftWindowCount: number;
  } {
    const prev = this.prevTtft;
    this.prevTtft = buckets;
    const none = { ttftP95Seconds: null, ttftWindowCount: 0 };
    if (buckets === null || prev === null) return none;
    const window = subtractBuckets(buckets, prev);
    const n = window.at(-1)?.count ?? 0;
    if (n <= 0) return none;
    const p95 = histogramQuantile(window, 0.95);
    return Number.isFinite(p95) ? { ttftP95Seconds: p95, ttftWindowCount: n } : none;
  }
}
