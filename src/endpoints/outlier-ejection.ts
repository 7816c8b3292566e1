// Passive health, like Envoy's outlier detection: an endpoint that fails N requests in a row is taken
// out for a cooldown that grows with each ejection, even while its /health still answers 200.

export interface EjectionPolicy {
  /** Consecutive failed requests that eject the endpoint (Envoy `consecutive_5xx`: 5). */
  consecutiveFailures: number;
  /** First ejection lasts this long; the n-th lasts n times as long (Envoy: 30 s). */
  baseEjectionMs: number;
  /** Cap on one ejection (Envoy: 300 s, or the base time if that is larger). */
  maxEjectionMs: number;
}

export const DEFAULT_EJECTION: EjectionPolicy = {
  consecutiveFailures: 5,
  baseEjectionMs: 30_000,
  maxEjectionMs: 300_000,
};

/**
 * A failed upstream attempt: an HTTP status (only 5xx count), or no response at all — refused
 * connection, reset, or timeout.
 */
export type RequestFailure = number | "connect" | "reset" | "timeout";

export class OutlierEjection {
  readonly policy: EjectionPolicy;
  consecutiveFailures = 0;
  /** Ejections so far in the current run of trouble; sets the next ejection's length. */
  ejections = 0;
  private ejectedUntil = 0;
  private previousEjectedUntil = 0;

  constructor(policy: Partial<EjectionPolicy> = {}) {
    this.policy = { ...DEFAULT_EJECTION, ...policy };
    const p = this.policy;
    if (!(Number.isInteger(p.consecutiveFailures) && p.consecutiveFailures >= 1)) {
      throw new RangeError(`consecutiveFailures must be a whole number >= 1, got ${p.consecutiveFailures}`);
    }
    if (!(p.baseEjectionMs >= 0 && p.maxEjectionMs >= 0)) {
      throw new RangeError("ejection times must be >= 0 ms");
    }
  }

  /** Counts one failure; returns the time the endpoint is ejected until when this one ejects it. */
  failure(now: number): number | null {
    // Requests sent before the ejection keep failing during it; they must not extend it.
    if (now < this.ejectedUntil) return null;
    if (++this.consecutiveFailures < this.policy.consecutiveFailures) return null;
    const { baseEjectionMs, maxEjectionMs } = this.policy;
    const cap = Math.max(maxEjectionMs, baseEjectionMs);
    // An endpoint that stayed in for longer than the longest ejection starts again from the base time.
    if (now - this.ejectedUntil > cap) this.ejections = 0;
    this.ejections++;
    this.consecutiveFailures = 0;
    this.previousEjectedUntil = this.ejectedUntil;
    this.ejectedUntil = now + Math.min(baseEjectionMs * this.ejections, cap);
    return this.ejectedUntil;
  }

  /** Ejects now, whatever the streak: a local-origin failure (a reset before any byte). */
  eject(now: number): number | null {
    if (now < this.ejectedUntil) return null;
    this.consecutiveFailures = this.policy.consecutiveFailures - 1;
    return this.failure(now);
  }

  /** Takes back the ejection just counted (the pool's cap refused it); the streak starts again. */
  undo(): void {
    this.ejections = Math.max(0, this.ejections - 1);
    this.ejectedUntil = this.previousEjectedUntil;
    this.consecutiveFailures = 0;
  }

  success(): void {
    this.consecutiveFailures = 0;
  }
}
