// A request's claim on an endpoint's in-flight counters and its share of the prefill view. Releasing it
// twice, or from both a `finally` and an abort handler, counts once, so the counters can never go negative.

import type { PrefillClaim } from "./prefill-claim.js";

/** What a lease counts against: the gateway's in-flight fields of an EndpointState. */
export interface InflightCounters {
  inflightRequests: number;
  inflightTokens: number;
  /** The prompt part of `inflightTokens`; absent where not counted. */
  inflightPromptTokens?: number;
  /** Told after the counters went down, or a request left prefill. */
  onCapacity?: (() => void) | null;
}

export class Lease {
  readonly tokens: number;
  /** The request's place in the endpoint's prefill view; null when not counted there. */
  readonly prefill: PrefillClaim | null;
  private readonly counters: InflightCounters;
  private open = true;

  constructor(
    counters: InflightCounters,
    tokens: number,
    prefill: PrefillClaim | null = null,
    private readonly prompt = 0,
  ) {
    this.counters = counters;
    this.tokens = tokens;
    this.prefill = prefill;
  }

  get released(): boolean {
    return !this.open;
  }

  /** The stream's first token passed: its prefill is done, which may let a queued request go. */
  firstToken(now = Date.now()): void {
    const c = this.prefill;
    if (!this.open || c === null || c.stage !== "prefill") return;
    c.firstToken(now);
    this.counters.onCapacity?.();
  }

  /** Gives the request and its tokens back; returns false when already released. */
  release(now = Date.now()): boolean {
    if (!this.open) return false;
    this.open = false;
    const c = this.counters;
    c.inflightRequests = Math.max(0, c.inflightRequests - 1);
    c.inflightTokens = Math.max(0, c.inflightTokens - this.tokens);
    if (c.inflightPromptTokens !== undefined)
      c.inflightPromptTokens = Math.max(0, c.inflightPromptTokens - this.prompt);
    this.prefill?.end(now);
    c.onCapacity?.();
    return true;
  }
}
