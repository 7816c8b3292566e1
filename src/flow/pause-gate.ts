// Batch pause (seed 004: "只要超过阈值，批处理暂停，不争辩"): a rule's traffic stops leaving the gateway
// queue while a watched pool's TTFT P95 is above a threshold, and resumes with hysteresis — only once the
// P95 has stayed below a lower mark for a while — so the pool does not flap at the threshold.

import type { PauseWhen } from "../config/route-types.js";
import type { LatencyWindow } from "./latency-window.js";

export interface PauseTransition {
  readonly paused: boolean;
  /** The P95 that triggered it (null: no samples left in the window). */
  readonly ttftP95Ms: number | null;
  readonly samples: number;
  /** When the condition was first met (for resume: when the P95 went below the mark). */
  readonly conditionSince: number;
}

export class PauseGate {
  paused = false;
  /** Last evaluated P95 and sample count, for metrics and explain. */
  lastP95Ms: number | null = null;
  lastSamples = 0;
  /** When the gate last changed state. */
  changedAt = 0;
  private calmSince: number | null = null;

  constructor(
    /** The rule whose requests wait while paused. */
    readonly rule: string,
    /** The pool those requests go to. */
    public pool: string,
    public when: PauseWhen,
    private window: LatencyWindow,
  ) {}

  /**
   * A reload kept the rule: its new condition (and window) from the next evaluation on, the state as it
   * is — the same object, so the requests already waiting under it follow the new condition.
   */
  reconfigure(pool: string, when: PauseWhen, window: LatencyWindow): void {
    this.pool = pool;
    this.when = when;
    this.window = window;
  }

  /** A reload removed the rule: nothing is held by it any more. */
  lift(now: number): void {
    if (this.paused) this.changedAt = now;
    this.paused = false;
    this.calmSince = null;
  }

  /** Re-reads the window; returns the transition when the state changed. */
  evaluate(now: number): PauseTransition | null {
    const w = this.when;
    const { value, count } = this.window.quantile(0.95, now);
    this.lastP95Ms = value;
    this.lastSamples = count;
    if (!this.paused) {
      if (value === null || count < w.minSamples || value <= w.ttftP95MsGt) return null;
      this.paused = true;
      this.changedAt = now;
      this.calmSince = null;
      return { paused: true, ttftP95Ms: value, samples: count, conditionSince: now };
    }
    // Paused: calm means the P95 is under the resume mark, or the watched pool has gone quiet.
    const calm = value === null || value < w.resumeBelowMs;
    if (!calm) {
      this.calmSince = null;
      return null;
    }
    this.calmSince ??= now;
    if (now - this.calmSince < w.resumeAfterSeconds * 1000) return null;
    this.paused = false;
    this.changedAt = now;
    const since = this.calmSince;
    this.calmSince = null;
    return { paused: false, ttftP95Ms: value, samples: count, conditionSince: since };
  }

  /** Seconds a caller refused while paused should wait before trying again. */
  retryAfterSeconds(): number {
    return this.when.retryAfterSeconds;
  }
}
