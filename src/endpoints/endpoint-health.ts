// Whether an endpoint may take a request, and why not: active health checks (thresholds, a request that
// found it down), the gateway's own drain and retirement, passive outlier ejection, an engine's
// Retry-After backoff, and the circuit breaker — with what each request's outcome means for them. One
// of the concerns an EndpointState holds (endpoint-state.ts); it reads nothing of the engine's metrics
// or of the gateway's in-flight accounting.

import { CircuitBreaker, type CircuitPolicy } from "./circuit-breaker.js";
import { type EjectionPolicy, OutlierEjection, type RequestFailure } from "./outlier-ejection.js";

export type HealthStatus = "unknown" | "healthy" | "unhealthy";

/** The longest an engine's Retry-After keeps it out of picks. */
const MAX_BACKOFF_MS = 30_000;

/** What the health of an endpoint tells, and asks, the state around it. */
export interface HealthEvents {
  /** Whether one more ejection keeps every pool of this endpoint within its maxEjectionPercent. */
  ejectionAllowed(): boolean;
  /** The endpoint went out (down or ejected). */
  out(): void;
  /** A log event of the endpoint's own (marked down by a request, ejected, circuit changes). */
  event(event: string, fields: Record<string, unknown>): void;
  /** The status is about to change from `previous` to `next`. */
  statusChanging(next: HealthStatus, previous: HealthStatus): void;
}

export class EndpointHealth {
  // Active health. Starts false: a new endpoint takes no traffic until its first check passes, as a
  // Kubernetes pod is not Ready before its probe does.
  healthy = false;
  status: HealthStatus = "unknown";
  consecutiveFailures = 0;
  consecutiveSuccesses = 0;
  lastHealthAt: number | null = null;
  lastHealthError: string | null = null;
  /** Set by the gateway while the endpoint is being taken out; the picker skips it. */
  draining = false;
  /** Removed by a reload: draining until its last request ends, then dropped (never reused). */
  retired = false;

  // Passive health, from the outcomes of requests. 0 when not ejected.
  ejectedUntil = 0;
  readonly outliers: OutlierEjection;
  /** After an engine's 429/503: skipped until then (its Retry-After). */
  backoffUntil = 0;
  readonly breaker: CircuitBreaker;
  /** A health check sent before this (ms) cannot bring the endpoint back (a request found it down). */
  private ignoreHealthBefore = 0;

  constructor(
    private readonly events: HealthEvents,
    ejection?: Partial<EjectionPolicy>,
    circuit?: Partial<CircuitPolicy>,
  ) {
    this.outliers = new OutlierEjection(ejection);
    this.breaker = new CircuitBreaker(circuit, (state, why) =>
      this.events.event(`endpoint.circuit-${state.replace("_", "-")}`, { reason: why }),
    );
  }

  ejected(now: number): boolean {
    return this.ejectedUntil > now;
  }

  /**
   * Healthy, not draining, not ejected, not backing off after an engine's 429/503, and its circuit
   * breaker lets a request through: the hard filter every pick starts from.
   */
  routable(now: number): boolean {
    return (
      this.healthy &&
      !this.draining &&
      this.ejectedUntil <= now &&
      this.backoffUntil <= now &&
      this.breaker.allows(now)
    );
  }

  /** Why the endpoint is not routable now, for explanations; null when it is. */
  unavailableWhy(now: number): string | null {
    if (!this.healthy) return "not healthy";
    if (this.draining) return "draining";
    if (this.ejectedUntil > now) return `ejected for ${this.ejectedUntil - now} ms`;
    return this.holdWhy(now);
  }

  /** Held back though healthy: backing off after a 429/503, or its circuit breaker. Null: not held. */
  holdWhy(now: number): string | null {
    if (this.backoffUntil > now)
      return `backing off for ${this.backoffUntil - now} ms (engine said Retry-After)`;
    if (this.breaker.allows(now)) return null;
    return this.breaker.state === "open"
      ? `circuit open for ${this.breaker.openUntil - now} ms`
      : "circuit half-open: a probe is in flight";
  }

  /**
   * Reports a failed upstream attempt and what it means for the endpoint:
   * - `connect` (refused: nothing listens) marks it down at once; it returns through a health check
   *   begun after this moment;
   * - `reset` before any byte ejects it at once (a local-origin failure, as Envoy counts them);
   * - 5xx and timeouts eject it after `consecutiveFailures` in a row;
   * - each counts in the circuit breaker's failure rate.
   * Ejections respect the pool's `maxEjectionPercent` (`ejectionAllowed`). Statuses below 500 are the
   * client's, not the endpoint's: they count as a success.
   */
  reportFailure(failure: RequestFailure, now = Date.now()): "down" | "ejected" | "capped" | null {
    if (typeof failure === "number" && failure < 500) {
      this.reportSuccess(now);
      return null;
    }
    this.breaker.record(false, now);
    if (failure === "connect") {
      this.markDown(now, "connection refused");
      return "down";
    }
    const until = failure === "reset" ? this.outliers.eject(now) : this.outliers.failure(now);
    if (until === null) return null;
    if (!this.events.ejectionAllowed()) {
      this.outliers.undo();
      return "capped";
    }
    this.ejectedUntil = until;
    this.events.out();
    this.events.event("endpoint.ejected", {
      reason: failure === "reset" ? "reset before any byte" : "consecutive failures",
      failure,
      ejected_ms: until - now,
    });
    return "ejected";
  }

  /** Reports an upstream response that was not a failure; ends the consecutive-failure streak. */
  reportSuccess(now = Date.now()): void {
    this.outliers.success();
    this.breaker.record(true, now);
  }

  /**
   * The engine answered 429 or 503: it is full, not broken. Skip it for `ms` (its Retry-After). Says
   * nothing of its health either way, so a half-open probe that met it frees the probe slot (it held the
   * slot for good, and the endpoint out, before).
   */
  reportBackpressure(ms: number, now = Date.now()): void {
    this.breaker.abandon();
    this.backoffUntil = Math.max(this.backoffUntil, now + Math.min(Math.max(ms, 100), MAX_BACKOFF_MS));
  }

  /** A request ended without an answer that says anything of the endpoint (the client left). */
  reportAbandoned(): void {
    this.breaker.abandon();
  }

  /** Nothing listens: out now, back only through a health check that starts after this. */
  private markDown(now: number, why: string): void {
    this.ignoreHealthBefore = now;
    this.consecutiveSuccesses = 0;
    this.lastHealthError = why;
    if (this.status !== "unhealthy") {
      this.setStatus("unhealthy");
      this.events.event("endpoint.unhealthy", { reason: why, by: "request" });
    }
  }

  /**
   * Records one health check; returns the new status when it changed, else null.
   * @param unhealthyThreshold consecutive failures that mark a healthy (or unknown) endpoint unhealthy
   * @param healthyThreshold consecutive successes that mark it healthy again
   */
  recordHealth(
    ok: boolean,
    now: number,
    error: string | null,
    unhealthyThreshold: number,
    healthyThreshold: number,
    /** When the check was sent; a success from before a request found the endpoint down is stale. */
    checkStartedAt = now,
  ): HealthStatus | null {
    if (ok && checkStartedAt < this.ignoreHealthBefore) return null;
    this.lastHealthAt = now;
    this.lastHealthError = ok ? null : error;
    if (ok) {
      this.consecutiveFailures = 0;
      this.consecutiveSuccesses++;
      if (this.status !== "healthy" && this.consecutiveSuccesses >= healthyThreshold) {
        return this.setStatus("healthy");
      }
    } else {
      this.consecutiveSuccesses = 0;
      this.consecutiveFailures++;
      if (this.status !== "unhealthy" && this.consecutiveFailures >= unhealthyThreshold) {
        return this.setStatus("unhealthy");
      }
    }
    return null;
  }

  private setStatus(status: HealthStatus): HealthStatus {
    this.events.statusChanging(status, this.status);
    this.status = status;
    this.healthy = status === "healthy";
    return status;
  }
}
