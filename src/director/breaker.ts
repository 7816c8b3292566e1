// A region's circuit breaker, as the director holds it: closed while the region answers, open (no traffic)
// once its own summary reports too many errors or its polls and requests fail in a row, then half-open —
// a few probe requests and good polls decide whether it closes again or stays out for another `openMs`.

import type { BreakerSettings } from "./director-types.js";

/** A breaker's phase; `open` turns into `half-open` by itself once `openMs` have passed. */
export type BreakerPhase = "closed" | "open" | "half-open";

/**
 * A summary's error rate opens the breaker only over at least this many requests in its window, so that
 * 1 failure in 2 requests (50%) does not take a quiet region out.
 */
export const MIN_WINDOW_REQUESTS = 20;

/** What a summary says about the region's errors, and over which stretch of time. */
export interface ErrorWindow {
  readonly requests: number;
  readonly errorRate: number;
  /** The window's length, seconds (the gateway's last minute unless it says otherwise). */
  readonly windowS?: number;
  /** When the summary was computed, epoch ms (the window ends there); default: when it arrived. */
  readonly computedAt?: number;
}

/**
 * One region's breaker. Every method takes `now`; reads never change it (the open → half-open step is
 * computed from the time, and only taken for real by the next observation or probe).
 */
export class RegionBreaker {
  private phase: BreakerPhase = "closed";
  private openedAt = 0;
  private lastReason: string | null = null;
  /** Closed: failed polls and failed requests in a row, and the last one's cause. */
  private failedPolls = 0;
  private failedRequests = 0;
  private lastFailure = "";
  /** Half-open: successes in a row (good polls, probes that came back ok) and probes handed out. */
  private successes = 0;
  private probesSent = 0;
  /** When it last closed; a breaker that never opened has been closed forever. */
  private closedAt = Number.NEGATIVE_INFINITY;
  /**
   * When it last left `open` (turned half-open). A summary's window that starts before then still holds
   * the outage's errors: its error rate says nothing of the region since, and neither reopens a
   * half-open breaker nor opens a closed one (after a recovery the last minute's old 5xx outweighed the
   * first new requests and took a recovered region out for another openMs).
   */
  private openEndedAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly settings: BreakerSettings) {}

  /** The phase at `now`. */
  state(now: number): BreakerPhase {
    if (this.phase === "open" && now >= this.openedAt + this.settings.openMs) return "half-open";
    return this.phase;
  }

  /** Why it last opened (`error_rate 0.31 ≥ 0.2`, `3 failed polls (last: timeout)`), or null. */
  get reason(): string | null {
    return this.lastReason;
  }

  /** Since when it has been closed, or null when it is not closed at `now`. */
  closedSince(now: number): number | null {
    return this.state(now) === "closed" ? this.closedAt : null;
  }

  /** Half-open with a probe left to hand out. */
  canProbe(now: number): boolean {
    if (this.state(now) !== "half-open") return false;
    const sent = this.phase === "half-open" ? this.probesSent : 0;
    return sent < this.settings.halfOpenProbes;
  }

  /** A request is sent to the half-open region as a probe; its outcome counts towards closing. */
  takeProbe(now: number): void {
    this.settle(now);
    if (this.phase === "half-open") this.probesSent++;
  }

  /** A summary arrived: its error rate may open the breaker; a good one is a success in a row. */
  onSummary(window: ErrorWindow, now: number): void {
    this.settle(now);
    const s = this.settings;
    const startsAt = (window.computedAt ?? now) - (window.windowS ?? 0) * 1000;
    const current = window.windowS === undefined || startsAt >= this.openEndedAt;
    const bad = current && window.requests >= MIN_WINDOW_REQUESTS && window.errorRate >= s.errorRateToOpen;
    const why = `error_rate ${round(window.errorRate)} ≥ ${s.errorRateToOpen}`;
    if (this.phase === "closed") {
      if (bad) this.open(why, now);
      else this.failedPolls = this.failedRequests = 0;
    } else if (this.phase === "half-open") {
      if (bad) this.open(`${why} while half-open`, now);
      else this.success(now);
    }
  }

  /** A poll failed (timeout, refused, bad answer). */
  onPollFailure(why: string, now: number): void {
    this.settle(now);
    if (this.phase === "half-open") this.open(`poll failed while half-open (${why})`, now);
    else if (this.phase === "closed") {
      this.failedPolls++;
      this.failure(why, now);
    }
  }

  /** A request sent there ended: ok, or failed for the region's fault. */
  onOutcome(ok: boolean, now: number): void {
    this.settle(now);
    if (this.phase === "half-open") {
      if (ok) this.success(now);
      else this.open("probe request failed while half-open", now);
    } else if (this.phase === "closed") {
      if (ok) this.failedPolls = this.failedRequests = 0;
      else {
        this.failedRequests++;
        this.failure("request failed", now);
      }
    }
  }

  /** Takes the open → half-open step for real, with fresh counters. */
  private settle(now: number): void {
    if (this.phase === "open" && this.state(now) === "half-open") {
      this.phase = "half-open";
      this.openEndedAt = this.openedAt + this.settings.openMs;
      this.successes = 0;
      this.probesSent = 0;
    }
  }

  private failure(why: string, now: number): void {
    this.lastFailure = why;
    const total = this.failedPolls + this.failedRequests;
    if (total < this.settings.failuresToOpen) return;
    const what =
      this.failedRequests === 0
        ? `${total} failed polls (last: ${this.lastFailure})`
        : this.failedPolls === 0
          ? `${total} failed requests`
          : `${total} failures in a row (${this.failedPolls} polls, ${this.failedRequests} requests; last: ${this.lastFailure})`;
    this.open(what, now);
  }

  private success(now: number): void {
    this.successes++;
    if (this.successes < this.settings.halfOpenProbes) return;
    this.phase = "closed";
    this.closedAt = now;
    this.failedPolls = this.failedRequests = 0;
  }

  private open(why: string, now: number): void {
    this.phase = "open";
    this.openedAt = now;
    this.lastReason = why;
    this.failedPolls = this.failedRequests = 0;
    this.successes = 0;
    this.probesSent = 0;
  }
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}
