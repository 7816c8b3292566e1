// A request's claim on an endpoint's in-flight counters. Releasing it twice, or from both a `finally`
// and an abort handler, counts once, so the counters can never go negative.

/** What a lease counts against: the gateway's in-flight fields of an EndpointState. */
export interface InflightCounters {
  inflightRequests: number;
  inflightTokens: number;
  /** Told after the counters went down. */
  onCapacity?: (() => void) | null;
}

export class Lease {
  readonly tokens: number;
  private readonly counters: InflightCounters;
  private open = true;

  constructor(counters: InflightCounters, tokens: number) {
    this.counters = counters;
    this.tokens = tokens;
  }

  get released(): boolean {
    return !this.open;
  }

  /** Gives the request and its tokens back; returns false when already released. */
  release(): boolean {
    if (!this.open) return false;
    this.open = false;
    const c = this.counters;
    c.inflightRequests = Math.max(0, c.inflightRequests - 1);
    c.inflightTokens = Math.max(0, c.inflightTokens - this.tokens);
    c.onCapacity?.();
    return true;
  }
}
