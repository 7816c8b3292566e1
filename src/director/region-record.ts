// What the director knows about one region: its last summary and when it came, the measured round trip
// to its gateway, its breaker, and since when it has been healthy — the only inputs a decision reads
// about a region (never per-pod state, which goes stale across a WAN).

import { RegionBreaker } from "./breaker.js";
import type { BreakerSettings, RegionState, RegionSummary } from "./director-types.js";

/** Weight of a new poll's round trip in the measured RTT's moving average. */
export const RTT_EWMA_ALPHA = 0.3;

/** A region's summaries, breaker and health over time. */
export class RegionRecord {
  readonly breaker: RegionBreaker;
  private held: RegionSummary | null = null;
  private receivedAt = 0;
  private rttEwma: number | null = null;
  private rttMin = Number.POSITIVE_INFINITY;
  /** When summaries became fresh again after none or a stale gap; when draining last ended. */
  private freshSince = 0;
  private notDrainingSince = 0;

  constructor(
    readonly name: string,
    private readonly staleAfterMs: number,
    breaker: BreakerSettings,
  ) {
    this.breaker = new RegionBreaker(breaker);
  }

  get summary(): RegionSummary | null {
    return this.held;
  }

  /** Measured round trip (an EWMA over polls), ms; null before one. */
  get measuredRttMs(): number | null {
    return this.rttEwma;
  }

  /**
   * How far the measured round trip runs above the lowest one seen (a congested or rerouted path), ms;
   * 0 before any. The director measures from where it runs, not from the caller, so only this excess —
   * not the measured value itself — refines the latency matrix for every caller.
   */
  get rttExcessMs(): number {
    return this.rttEwma === null ? 0 : Math.max(0, this.rttEwma - this.rttMin);
  }

  /**
   * A summary arrived. One computed before the summary held is late (an old push, a slow poll) and is
   * dropped. Returns whether it was taken.
   */
  observe(summary: RegionSummary, now: number, rttMs?: number): boolean {
    if (this.held !== null && summary.computedAt < this.held.computedAt) return false;
    const wasStale = this.stale(now);
    const wasDraining = this.held?.draining ?? true;
    this.held = summary;
    this.receivedAt = now;
    if (wasStale) this.freshSince = now;
    if (wasDraining && !summary.draining) this.notDrainingSince = now;
    if (rttMs !== undefined && Number.isFinite(rttMs) && rttMs >= 0) {
      this.rttEwma = this.rttEwma === null ? rttMs : this.rttEwma + RTT_EWMA_ALPHA * (rttMs - this.rttEwma);
      this.rttMin = Math.min(this.rttMin, rttMs);
    }
    // A summary stale on arrival (cached long ago) says nothing about the region now.
    if (!this.stale(now))
      this.breaker.onSummary({ ...summary.window, computedAt: Math.min(summary.computedAt, now) }, now);
    return true;
  }

  /**
   * Age of the summary held: from the earlier of its `computedAt` and its arrival, so that neither a
   * gateway's clock running ahead nor a summary cached before it was sent makes it look fresher than it is.
   */
  ageMs(now: number): number | null {
    if (this.held === null) return null;
    return Math.max(0, now - Math.min(this.held.computedAt, this.receivedAt));
  }

  /** No summary, or one older than `staleAfterMs`: unknown, never healthy. */
  stale(now: number): boolean {
    const age = this.ageMs(now);
    return age === null || age > this.staleAfterMs;
  }

  /**
   * Since when the region has been healthy — a fresh summary, not draining, its breaker closed — without
   * a break; null when it is not healthy at `now`.
   */
  healthySince(now: number): number | null {
    const closed = this.breaker.closedSince(now);
    if (closed === null || this.stale(now) || this.held?.draining !== false) return null;
    return Math.max(this.freshSince, this.notDrainingSince, closed);
  }

  state(now: number): RegionState {
    return {
      region: this.name,
      breaker: this.breaker.state(now),
      breakerReason: this.breaker.reason,
      summaryAgeMs: this.ageMs(now),
      stale: this.stale(now),
      summary: this.held,
      measuredRttMs: this.rttEwma,
    };
  }
}
