// The recent requests a region's summary reports on (director-types.ts RegionSummary.window): a ring of
// the last answers — when each ended, its TTFT if it streamed, and whether it failed for the gateway's
// or the engines' fault (5xx; a 4xx is the caller's). Recording one costs a few array writes on the
// request path; the P95 and error rate are computed only when a summary is asked for.

/** Answers kept; a summary reads those of the last `windowMs` among them. */
const CAPACITY = 8192;
/** Streams needed before a TTFT P95 is stated. */
const MIN_TTFT_SAMPLES = 5;

export class RegionWindow {
  private readonly at = new Float64Array(CAPACITY);
  private readonly ttft = new Float64Array(CAPACITY);
  private readonly failed = new Uint8Array(CAPACITY);
  private next = 0;
  private count = 0;

  constructor(readonly windowMs = 60_000) {}

  /** One answer: `ttftMs` NaN when it did not stream (or never got a first token); `failed` a 5xx. */
  record(now: number, ttftMs: number, failed: boolean): void {
    const i = this.next;
    this.at[i] = now;
    this.ttft[i] = ttftMs;
    this.failed[i] = failed ? 1 : 0;
    this.next = (i + 1) % CAPACITY;
    if (this.count < CAPACITY) this.count++;
  }

  /** The requests of the last `windowMs`, their TTFT P95 (null with too few streams) and error rate. */
  summary(now: number): { windowS: number; requests: number; ttftP95Ms: number | null; errorRate: number } {
    const from = now - this.windowMs;
    const ttfts: number[] = [];
    let requests = 0;
    let failures = 0;
    for (let k = 0; k < this.count; k++) {
      const i = (this.next - 1 - k + CAPACITY) % CAPACITY;
      if (this.at[i]! < from) break;
      requests++;
      failures += this.failed[i]!;
      if (!Number.isNaN(this.ttft[i]!)) ttfts.push(this.ttft[i]!);
    }
    ttfts.sort((a, b) => a - b);
    const p95 =
      ttfts.length < MIN_TTFT_SAMPLES
        ? null
        : Math.round(ttfts[Math.min(ttfts.length - 1, Math.ceil(0.95 * ttfts.length) - 1)]!);
    return {
      windowS: this.windowMs / 1000,
      requests,
      ttftP95Ms: p95,
      errorRate: requests === 0 ? 0 : failures / requests,
    };
  }
}
