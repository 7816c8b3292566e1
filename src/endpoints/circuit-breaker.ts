// A circuit breaker per endpoint, distinct from health checks and from outlier ejection: it opens when
// the share of failed requests over a sliding window passes a threshold (an engine that answers /health
// but fails a third of its requests), stays open for a cool-off that doubles while it keeps failing,
// then lets probe requests through one at a time (half-open): enough successes in a row close it, any
// failure opens it again. State machine as sgl-router's and Envoy's; the trigger is a failure rate
// (Envoy's failure-percentage ejection) rather than a count, so a busy endpoint with rare errors stays in.

export type CircuitState = "closed" | "open" | "half_open";

export interface CircuitPolicy {
  /** Failures / requests over the window at which the breaker opens. */
  readonly failureRatio: number;
  /** Fewer requests than this in the window never open it. */
  readonly minRequests: number;
  readonly windowMs: number;
  /** First open period; doubled on each reopening from half-open, up to `maxOpenMs`. */
  readonly openMs: number;
  readonly maxOpenMs: number;
  /** Consecutive probe successes that close it. */
  readonly closeAfterSuccesses: number;
}

export const DEFAULT_CIRCUIT: CircuitPolicy = {
  failureRatio: 0.5,
  minRequests: 10,
  windowMs: 10_000,
  openMs: 5_000,
  maxOpenMs: 60_000,
  closeAfterSuccesses: 2,
};

const BUCKETS = 10;

export class CircuitBreaker {
  readonly policy: CircuitPolicy;
  state: CircuitState = "closed";
  /** While open: when probes may start. */
  openUntil = 0;
  /** Times opened since it was last closed; sets the next open period. */
  opens = 0;
  private probeInFlight = false;
  private probeSuccesses = 0;
  private readonly ok = new Float64Array(BUCKETS);
  private readonly failed = new Float64Array(BUCKETS);
  private bucket = 0;
  private bucketStart = 0;

  constructor(
    policy: Partial<CircuitPolicy> = {},
    /** Told of every change of state. */
    private readonly onChange: (state: CircuitState, why: string) => void = () => {},
  ) {
    this.policy = { ...DEFAULT_CIRCUIT, ...policy };
  }

  /** Whether a request may be sent now (no side effect: `dispatched` claims a half-open probe). */
  allows(now: number): boolean {
    if (this.state === "closed") return true;
    if (this.state === "open") return now >= this.openUntil;
    return !this.probeInFlight;
  }

  /** A request was sent; from open past its cool-off this is the first probe. */
  dispatched(now: number): void {
    if (this.state === "open" && now >= this.openUntil)
      this.transition("half_open", "cool-off over: probing");
    if (this.state === "half_open") this.probeInFlight = true;
  }

  record(success: boolean, now: number): void {
    if (this.state === "half_open") {
      this.probeInFlight = false;
      if (!success) {
        this.open(now, "a probe failed");
        return;
      }
      if (++this.probeSuccesses >= this.policy.closeAfterSuccesses) {
        this.opens = 0;
        this.reset(now);
        this.transition("closed", `${this.probeSuccesses} probes succeeded`);
      }
      return;
    }
    if (this.state === "open") return; // answers to requests sent before it opened
    this.advance(now);
    (success ? this.ok : this.failed)[this.bucket]!++;
    if (success) return;
    let ok = 0;
    let failed = 0;
    for (let i = 0; i < BUCKETS; i++) {
      ok += this.ok[i]!;
      failed += this.failed[i]!;
    }
    const total = ok + failed;
    if (total >= this.policy.minRequests && failed / total >= this.policy.failureRatio) {
      this.open(now, `${failed} of ${total} requests failed in ${this.policy.windowMs / 1000} s`);
    }
  }

  /** A probe ended without an answer (the client left): the next one may go. */
  abandon(): void {
    this.probeInFlight = false;
  }

  /** The engine went away and came back (health checks): what it did before says nothing now. */
  reset(now: number): void {
    this.ok.fill(0);
    this.failed.fill(0);
    this.bucketStart = now;
    this.probeInFlight = false;
    this.probeSuccesses = 0;
  }

  private open(now: number, why: string): void {
    this.opens++;
    const p = this.policy;
    this.openUntil = now + Math.min(p.openMs * 2 ** (this.opens - 1), p.maxOpenMs);
    this.reset(now);
    this.transition("open", why);
  }

  private transition(state: CircuitState, why: string): void {
    if (state === this.state) return;
    this.state = state;
    this.onChange(state, why);
  }

  private advance(now: number): void {
    const width = this.policy.windowMs / BUCKETS;
    if (now - this.bucketStart >= this.policy.windowMs) {
      this.ok.fill(0);
      this.failed.fill(0);
      this.bucketStart = now;
      return;
    }
    while (now - this.bucketStart >= width) {
      this.bucketStart += width;
      this.bucket = (this.bucket + 1) % BUCKETS;
      this.ok[this.bucket] = 0;
      this.failed[this.bucket] = 0;
    }
  }
}
