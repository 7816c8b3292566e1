// How an InferencePool treats failing engines: `outlierDetection` (eject after consecutive failures, at
// most `maxEjectionPercent` of the pool at once) and `circuitBreaker` (open on a failure rate). Both are
// kept per engine: a pool that borrows another's engines shares their state, with the settings of the
// first pool that lists the engine.

import { type CircuitPolicy, DEFAULT_CIRCUIT } from "../endpoints/circuit-breaker.js";
import { DEFAULT_EJECTION, type EjectionPolicy } from "../endpoints/outlier-ejection.js";
import type { IssueList } from "./errors.js";
import type { FieldReader } from "./fields.js";

export interface OutlierDetection extends EjectionPolicy {
  /** The most of the pool that may be ejected at once, in percent; one endpoint always may. Default 50. */
  readonly maxEjectionPercent: number;
}

export const DEFAULT_OUTLIER_DETECTION: OutlierDetection = { ...DEFAULT_EJECTION, maxEjectionPercent: 50 };

export interface CircuitBreakerSettings extends CircuitPolicy {
  /** false: requests are never held by a breaker (ejection and health checks still apply). */
  readonly enabled: boolean;
}

export const DEFAULT_CIRCUIT_BREAKER: CircuitBreakerSettings = { ...DEFAULT_CIRCUIT, enabled: true };

/**
 * @example
 * ```yaml
 * outlierDetection: { consecutiveFailures: 5, baseEjectionMs: 30000, maxEjectionMs: 300000, maxEjectionPercent: 50 }
 * ```
 */
export function parseOutlierDetection(spec: FieldReader): OutlierDetection {
  const f = spec.map("outlierDetection");
  if (!f) return DEFAULT_OUTLIER_DETECTION;
  const d = DEFAULT_OUTLIER_DETECTION;
  const out: OutlierDetection = {
    consecutiveFailures: f.int("consecutiveFailures", { min: 1, max: 1000 }) ?? d.consecutiveFailures,
    baseEjectionMs: f.int("baseEjectionMs", { min: 0, max: 3_600_000 }) ?? d.baseEjectionMs,
    maxEjectionMs: f.int("maxEjectionMs", { min: 0, max: 86_400_000 }) ?? d.maxEjectionMs,
    maxEjectionPercent: f.int("maxEjectionPercent", { min: 0, max: 100 }) ?? d.maxEjectionPercent,
  };
  f.done();
  return out;
}

/**
 * @example
 * ```yaml
 * circuitBreaker: { failureRatio: 0.5, minRequests: 10, windowMs: 10000, openMs: 5000, maxOpenMs: 60000 }
 * ```
 */
export function parseCircuitBreaker(spec: FieldReader, issues: IssueList): CircuitBreakerSettings {
  const f = spec.map("circuitBreaker");
  if (!f) return DEFAULT_CIRCUIT_BREAKER;
  const d = DEFAULT_CIRCUIT_BREAKER;
  let failureRatio = d.failureRatio;
  const ratio = f.raw("failureRatio");
  if (ratio !== undefined) {
    if (typeof ratio === "number" && ratio > 0 && ratio <= 1) failureRatio = ratio;
    else issues.error(f.at("failureRatio"), `must be a number in (0, 1], got ${JSON.stringify(ratio)}`);
  }
  const out: CircuitBreakerSettings = {
    enabled: f.bool("enabled") ?? d.enabled,
    failureRatio,
    minRequests: f.int("minRequests", { min: 1, max: 1_000_000 }) ?? d.minRequests,
    windowMs: f.int("windowMs", { min: 100, max: 3_600_000 }) ?? d.windowMs,
    openMs: f.int("openMs", { min: 10, max: 3_600_000 }) ?? d.openMs,
    maxOpenMs: f.int("maxOpenMs", { min: 10, max: 86_400_000 }) ?? d.maxOpenMs,
    closeAfterSuccesses: f.int("closeAfterSuccesses", { min: 1, max: 1000 }) ?? d.closeAfterSuccesses,
  };
  f.done();
  return out;
}
