// A retry budget in Envoy's manner: retries may add at most a percentage of the requests seen over the
// last ten seconds (with a floor of 3), so a failing pool is not hit with a retry storm.

const WINDOW_MS = 10_000;
const BUCKETS = 10;

export class RetryBudget {
  private readonly requests = new Float64Array(BUCKETS);
  private readonly retries = new Float64Array(BUCKETS);
  private bucket = 0;
  private bucketStart = 0;

  constructor(
    private readonly percent: number,
    private readonly minRetries = 3,
  ) {}

  recordRequest(now = performance.now()): void {
    this.advance(now);
    this.requests[this.bucket]!++;
  }

  /** Takes one retry from the budget if there is room. */
  tryRetry(now = performance.now()): boolean {
    if (this.percent <= 0) return false;
    this.advance(now);
    let req = 0;
    let ret = 0;
    for (let i = 0; i < BUCKETS; i++) {
      req += this.requests[i]!;
      ret += this.retries[i]!;
    }
    if (ret >= Math.max(this.minRetries, (req * this.percent) / 100)) return false;
    this.retries[this.bucket]!++;
    return true;
  }

  private advance(now: number): void {
    const width = WINDOW_MS / BUCKETS;
    if (now - this.bucketStart >= WINDOW_MS) {
      // Idle for a whole window (or the first call): start afresh.
      this.requests.fill(0);
      this.retries.fill(0);
      this.bucketStart = now;
      return;
    }
    while (now - this.bucketStart >= width) {
      this.bucketStart += width;
      this.bucket = (this.bucket + 1) % BUCKETS;
      this.requests[this.bucket] = 0;
      this.retries[this.bucket] = 0;
    }
  }
}
