// Builders for the director core's tests: a three-region config (two in the EU, one in the US) and region
// summaries with only what a test changes spelled out.

import type { DirectorConfig, DirectorQuery, RegionSummary } from "../director/director-types.js";

export const EU_WEST = "eu-west";
export const EU_CENTRAL = "eu-central";
export const US_EAST = "us-east";
export const REGIONS = [EU_WEST, EU_CENTRAL, US_EAST] as const;

/** eu-west is nearest for EU callers, us-east for US ones; tenant `gdpr` is EU-only, `bank` eu-west only. */
export function testConfig(overrides: Partial<DirectorConfig> = {}): DirectorConfig {
  return {
    name: "test",
    listen: { host: "127.0.0.1", port: 0 },
    regions: REGIONS.map((name) => ({
      name,
      gatewayUrl: `http://${name}.example:8080`,
      summaryUrl: `http://${name}.example:8080/admin/region/summary`,
      summaryToken: null,
      cost: 1,
    })),
    latencyMs: {
      [EU_WEST]: { [EU_WEST]: 5, [EU_CENTRAL]: 20, [US_EAST]: 80 },
      [US_EAST]: { [EU_WEST]: 80, [EU_CENTRAL]: 95, [US_EAST]: 5 },
    },
    defaultLatencyMs: 100,
    residency: { gdpr: [EU_WEST, EU_CENTRAL], bank: [EU_WEST] },
    weights: { latency: 0.4, headroom: 0.3, errors: 0.2, cost: 0.1 },
    hysteresis: { dwellMs: 30_000, switchMargin: 0.1 },
    breaker: { errorRateToOpen: 0.2, failuresToOpen: 3, openMs: 10_000, halfOpenProbes: 3 },
    spillover: { minHeadroom: 0.15, maxShare: 0.5 },
    affinity: { header: "x-session-id", ttlMs: 300_000 },
    polling: { intervalMs: 1_000, staleAfterMs: 5_000, timeoutMs: 1_000 },
    mode: "forward",
    answerTtlS: 15,
    ...overrides,
  };
}

export interface SummaryOptions {
  readonly headroom?: number;
  readonly errorRate?: number;
  readonly requests?: number;
  readonly draining?: boolean;
  /** The model's alias is ready (default true). */
  readonly ready?: boolean;
  readonly versions?: readonly string[];
}

/** A summary of `region` computed at `now`, serving model `chat` (version v1). */
export function summary(region: string, now: number, o: SummaryOptions = {}): RegionSummary {
  const ready = o.ready ?? true;
  const headroom = o.headroom ?? 0.8;
  return {
    region,
    computedAt: now,
    draining: o.draining ?? false,
    configVersion: "c1",
    models: [
      {
        alias: "chat",
        ready,
        versions: (o.versions ?? ["v1"]).map((version) => ({ version, ready })),
      },
    ],
    pools: [{ pool: "p", headroom, freeSlots: 10, routableEndpoints: 2, endpoints: 2, queued: 0 }],
    headroomByModel: { chat: ready ? headroom : 0 },
    window: { windowS: 60, requests: o.requests ?? 100, ttftP95Ms: 200, errorRate: o.errorRate ?? 0 },
  };
}

/** A request of tenant `t` (no residency) from an EU caller, without a session unless given. */
export function query(o: Partial<DirectorQuery> = {}): DirectorQuery {
  return { tenant: "t", model: "chat", version: null, callerRegion: EU_WEST, session: null, ...o };
}
