// What the last scrapes of an engine's /metrics said (its queue, KV use, cache geometry, adapters, the
// rates between two scrapes) and how far to trust it: one of the concerns an EndpointState holds
// (endpoint-state.ts). Written by the scraper, read by the picker, flow control and the snapshot.

import type { EngineReading, LoraState } from "./dialects.js";
import { ScrapeWindow } from "./scrape-window.js";

export const MIN_METRICS_STALENESS_MS = 200;

/**
 * How old the last good scrape may be before the picker stops trusting it. Tied to the endpoint's own
 * scrape interval so a slow interval is not declared stale between two healthy scrapes (llm-d #2514).
 * @example metricsStalenessBound(250) // { ms: 1000, warning: null }
 */
export function metricsStalenessBound(
  intervalMs: number,
  configuredMs?: number,
): { ms: number; warning: string | null } {
  if (configuredMs === undefined) {
    return { ms: Math.max(4 * intervalMs, MIN_METRICS_STALENESS_MS), warning: null };
  }
  const warning =
    configuredMs < 2 * intervalMs
      ? `metrics staleness bound ${configuredMs} ms is under twice the scrape interval (${intervalMs} ms): ` +
        "one late scrape will mark the endpoint's metrics stale"
      : null;
  return { ms: configuredMs, warning };
}

export class EngineScrape {
  // From the last successful scrape; null when the engine does not report it.
  waiting: number | null = null;
  running: number | null = null;
  kvUsage: number | null = null;
  blockSize: number | null = null;
  numGpuBlocks: number | null = null;
  loras: LoraState | null = null;
  /** Prefix-cache hits / queries (tokens) between the last two scrapes; null with no queries. */
  prefixCacheHitRate: number | null = null;
  /** p95 TTFT of requests finished between the last two scrapes; null with none. */
  ttftP95Seconds: number | null = null;
  /** How many TTFT observations that p95 rests on. */
  ttftWindowCount = 0;
  /** Wall-clock ms of the last successful scrape. */
  scrapedAt: number | null = null;
  scrapeDurationMs: number | null = null;
  scrapeErrors = 0;
  lastScrapeError: string | null = null;
  /** How old the last good scrape may be before it is not trusted (metricsStalenessBound). */
  readonly stalenessMs: number;
  /** Set when the staleness bound is configured too tight for the scrape interval. */
  readonly stalenessWarning: string | null;

  /** The rates the last two scrapes imply (scrape-window.ts). */
  private readonly window = new ScrapeWindow();

  constructor(intervalMs: number, configuredStalenessMs?: number) {
    const bound = metricsStalenessBound(intervalMs, configuredStalenessMs);
    this.stalenessMs = bound.ms;
    this.stalenessWarning = bound.warning;
  }

  /** The last successful scrape is younger than the staleness bound. */
  fresh(now: number): boolean {
    return this.scrapedAt !== null && now - this.scrapedAt <= this.stalenessMs;
  }

  /** A successful scrape. Rates come from the change since the previous successful scrape. */
  record(r: EngineReading, now: number, durationMs: number): void {
    this.waiting = r.waiting;
    this.running = r.running;
    this.kvUsage = r.kvUsage;
    this.blockSize = r.blockSize;
    this.numGpuBlocks = r.numGpuBlocks;
    this.loras = r.loras;
    const w = this.window.apply(r);
    this.prefixCacheHitRate = w.prefixCacheHitRate;
    this.ttftP95Seconds = w.ttftP95Seconds;
    this.ttftWindowCount = w.ttftWindowCount;
    this.scrapedAt = now;
    this.scrapeDurationMs = durationMs;
    this.lastScrapeError = null;
  }

  /** A failed scrape keeps the last values; fresh() says how much to trust them. */
  recordError(error: string, durationMs: number): void {
    this.scrapeErrors++;
    this.lastScrapeError = error;
    this.scrapeDurationMs = durationMs;
  }
}
