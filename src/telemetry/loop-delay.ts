// How long the gateway's event loop kept work waiting: every request, stream chunk and scrape passes
// through that one thread, so a delay here is added to whatever was in flight. Read from Node's
// `monitorEventLoopDelay` (a timer sampled every `resolutionMs`) in fixed windows: the figures of the
// last complete window are what `/metrics` shows, so several scrapers see the same values.

import { type ELDHistogram, monitorEventLoopDelay } from "node:perf_hooks";

export interface LoopDelayWindow {
  /** Milliseconds; null before the first window closes. */
  p50Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
  /** The rest of the window's figures, for nodejs_eventloop_lag_* (same units, same window). */
  minMs: number | null;
  meanMs: number | null;
  stddevMs: number | null;
  p90Ms: number | null;
}

const EMPTY: LoopDelayWindow = {
  p50Ms: null,
  p99Ms: null,
  maxMs: null,
  minMs: null,
  meanMs: null,
  stddevMs: null,
  p90Ms: null,
};

export class LoopDelayMonitor {
  private readonly histogram: ELDHistogram;
  private readonly resolutionNs: number;
  private timer: NodeJS.Timeout | null = null;
  last: LoopDelayWindow = EMPTY;

  constructor(
    readonly windowMs = 10_000,
    resolutionMs = 10,
    /** Told when a window's worst delay passes `stallMs` (the gateway logs it). */
    private readonly onStall: ((w: LoopDelayWindow) => void) | null = null,
    readonly stallMs = 100,
  ) {
    this.histogram = monitorEventLoopDelay({ resolution: resolutionMs });
    this.resolutionNs = resolutionMs * 1e6;
  }

  start(): void {
    if (this.timer) return;
    this.histogram.enable();
    this.timer = setInterval(() => this.close(), this.windowMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.histogram.disable();
  }

  /** Ends the current window now (tests, and the interval). */
  close(): LoopDelayWindow {
    const h = this.histogram;
    // The histogram holds whole intervals between the sampling timer's runs: the delay is what exceeds it.
    const ms = (ns: number) => Math.round(Math.max(0, ns - this.resolutionNs) / 1e3) / 1e3;
    this.last =
      h.count === 0
        ? EMPTY
        : {
            p50Ms: ms(h.percentile(50)),
            p99Ms: ms(h.percentile(99)),
            maxMs: ms(h.max),
            minMs: ms(h.min),
            meanMs: ms(h.mean),
            // A spread, not a delay: the interval is not subtracted.
            stddevMs: Math.round(h.stddev / 1e3) / 1e3,
            p90Ms: ms(h.percentile(90)),
          };
    h.reset();
    if (this.onStall && this.last.maxMs !== null && this.last.maxMs >= this.stallMs) this.onStall(this.last);
    return this.last;
  }
}
