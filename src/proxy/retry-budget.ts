// A retry budget in Envoy's manner (retry_budget): retries in flight may be at most a percentage of the
// requests in flight, with a floor (`min_retry_concurrency`, 3) so that one crash among few requests
// never exhausts it. Counting concurrency rather than a window means a failing pool cannot be hit with a
// retry storm, and the budget comes back the moment retries end.

export class RetryBudget {
  /** Requests of the pool in the forward stage now. */
  active = 0;
  /** Retries in flight now. */
  retrying = 0;

  constructor(
    private readonly percent: number,
    private readonly minConcurrency = 3,
  ) {}

  /** A request enters the forward stage; call `end` when it leaves, however it leaves. */
  begin(): void {
    this.active++;
  }

  end(): void {
    this.active = Math.max(0, this.active - 1);
  }

  /** Takes one concurrent retry if there is room; give it back with `retryDone`. */
  tryRetry(): boolean {
    if (this.percent <= 0) return false;
    if (this.retrying >= Math.max(this.minConcurrency, (this.active * this.percent) / 100)) return false;
    this.retrying++;
    return true;
  }

  retryDone(): void {
    this.retrying = Math.max(0, this.retrying - 1);
  }
}
