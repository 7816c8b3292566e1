// A sliding window of latency samples (one pool's TTFT) and its quantile: what `pauseWhen` watches.
// A ring of the newest samples; the quantile is computed over those younger than the window.

export class LatencyWindow {
  private readonly times: Float64Array;
  private readonly values: Float64Array;
  private next = 0;
  private filled = 0;
  private readonly scratch: Float64Array;

  /**
   * @param windowMs how far back samples count
   * @param capacity newest samples kept (older ones drop out first); 8,192 holds a minute at 136 req/s
   */
  constructor(
    readonly windowMs: number,
    capacity = 8192,
  ) {
    this.times = new Float64Array(capacity);
    this.values = new Float64Array(capacity);
    this.scratch = new Float64Array(capacity);
  }

  add(valueMs: number, now: number): void {
    this.times[this.next] = now;
    this.values[this.next] = valueMs;
    this.next = (this.next + 1) % this.times.length;
    if (this.filled < this.times.length) this.filled++;
  }

  /** The q-quantile (nearest rank) of the samples in the window, and how many there were. */
  quantile(q: number, now: number): { value: number | null; count: number } {
    const from = now - this.windowMs;
    let n = 0;
    for (let i = 0; i < this.filled; i++) {
      if (this.times[i]! >= from) this.scratch[n++] = this.values[i]!;
    }
    if (n === 0) return { value: null, count: 0 };
    const live = this.scratch.subarray(0, n).sort();
    const rank = Math.min(n - 1, Math.max(0, Math.ceil(q * n) - 1));
    return { value: live[rank]!, count: n };
  }
}
