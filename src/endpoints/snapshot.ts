// The JSON view of one endpoint for the admin API and `route explain`: everything the picker could have
// seen, with times as ISO strings and copies instead of live arrays.

import type { EngineDialect } from "../config/inference-pool.js";
import type { EndpointState, HealthStatus } from "./endpoint-state.js";

export function snapshotOf(ep: EndpointState, now: number): EndpointSnapshot {
  return {
    pool: ep.pool,
    name: ep.name,
    url: ep.url,
    dialect: ep.dialect,
    routable: ep.routable(now),
    health: {
      status: ep.health.status,
      healthy: ep.healthy,
      consecutiveFailures: ep.health.consecutiveFailures,
      lastCheckAt: isoOrNull(ep.health.lastHealthAt),
      lastError: ep.health.lastHealthError,
    },
    draining: ep.draining,
    ejection: {
      ejected: ep.health.ejected(now),
      ejectedUntil: ep.ejectedUntil > now ? isoOrNull(ep.ejectedUntil) : null,
      consecutiveRequestFailures: ep.health.outliers.consecutiveFailures,
      ejections: ep.health.outliers.ejections,
    },
    circuit: {
      state: ep.health.breaker.state,
      openUntil: ep.health.breaker.state === "open" ? isoOrNull(ep.health.breaker.openUntil) : null,
      opens: ep.health.breaker.opens,
    },
    backoffUntil: ep.health.backoffUntil > now ? isoOrNull(ep.health.backoffUntil) : null,
    unavailable: ep.health.unavailableWhy(now),
    served: {
      model: ep.model,
      modelVersion: ep.modelVersion,
      expectedVersion: ep.options.modelVersion ?? null,
      // A `kubectl rollout undo` (or a wrong image) shows here: the engine serves another version.
      versionMismatch:
        ep.options.modelVersion != null &&
        ep.modelVersion !== null &&
        ep.modelVersion !== ep.options.modelVersion,
      adapters: ep.servedAdapters === null ? null : [...ep.servedAdapters],
      likelyResident: [...ep.adapterRecord.list()],
      readAt: isoOrNull(ep.modelsReadAt),
      lastError: ep.lastModelsError,
    },
    inflight: { requests: ep.inflightRequests, tokens: ep.inflightTokens },
    prefill: {
      pendingTokens: ep.prefill.pendingTokens,
      pendingRequests: ep.prefill.pendingRequests,
      decoding: ep.prefill.decoding,
      predictedWaitMs: Math.round(ep.predictTtftMs(0, now)),
      prefillMsPerKToken: Math.round(ep.prefill.prefillMsPerKToken() * 10) / 10,
      tpotMs: roundOrNull(ep.prefill.tpotMs()),
      observations: ep.prefill.observations,
    },
    metrics: {
      fresh: ep.metricsFresh(now),
      ageMs: ep.scrapedAt === null ? null : now - ep.scrapedAt,
      stalenessMs: ep.metricsStalenessMs,
      scrapedAt: isoOrNull(ep.scrapedAt),
      scrapeDurationMs:
        ep.scrape.scrapeDurationMs === null ? null : Math.round(ep.scrape.scrapeDurationMs * 10) / 10,
      scrapeErrors: ep.scrape.scrapeErrors,
      lastError: ep.scrape.lastScrapeError,
      waiting: ep.waiting,
      running: ep.running,
      kvUsage: ep.kvUsage,
      blockSize: ep.blockSize,
      numGpuBlocks: ep.numGpuBlocks,
      loras: ep.loras && {
        max: ep.loras.max,
        running: [...ep.loras.running],
        waiting: [...ep.loras.waiting],
      },
      prefixCacheHitRate: ep.scrape.prefixCacheHitRate,
      ttftP95Seconds: ep.scrape.ttftP95Seconds,
      ttftWindowCount: ep.scrape.ttftWindowCount,
    },
  };
}

function isoOrNull(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

export interface EndpointSnapshot {
  pool: string;
  name: string;
  url: string;
  dialect: EngineDialect;
  routable: boolean;
  health: {
    status: HealthStatus;
    healthy: boolean;
    consecutiveFailures: number;
    lastCheckAt: string | null;
    lastError: string | null;
  };
  draining: boolean;
  ejection: {
    ejected: boolean;
    ejectedUntil: string | null;
    consecutiveRequestFailures: number;
    ejections: number;
  };
  circuit: { state: string; openUntil: string | null; opens: number };
  /** After an engine's 429/503, until when it is skipped. */
  backoffUntil: string | null;
  /** Why it is not routable now; null when it is. */
  unavailable: string | null;
  /** What its /v1/models said (or config, until it answered). */
  served: {
    model: string | null;
    modelVersion: string | null;
    /** The version the pool's config says this engine serves. */
    expectedVersion: string | null;
    /** The engine reports another version than the config expects. */
    versionMismatch: boolean;
    adapters: string[] | null;
    likelyResident: string[];
    readAt: string | null;
    lastError: string | null;
  };
  inflight: { requests: number; tokens: number };
  /** The gateway's prefill view and what it learned of the engine's speed (endpoints/prefill-load.ts). */
  prefill: {
    pendingTokens: number;
    pendingRequests: number;
    decoding: number;
    /** Predicted ms to a first token for a request with no prompt of its own, sent now. */
    predictedWaitMs: number;
    prefillMsPerKToken: number;
    tpotMs: number | null;
    /** TTFT observations the fit rests on. */
    observations: number;
  };
  metrics: {
    fresh: boolean;
    ageMs: number | null;
    stalenessMs: number;
    scrapedAt: string | null;
    scrapeDurationMs: number | null;
    scrapeErrors: number;
    lastError: string | null;
    waiting: number | null;
    running: number | null;
    kvUsage: number | null;
    blockSize: number | null;
    numGpuBlocks: number | null;
    loras: { max: number | null; running: string[]; waiting: string[] } | null;
    prefixCacheHitRate: number | null;
    ttftP95Seconds: number | null;
    ttftWindowCount: number;
  };
}

function roundOrNull(v: number | null): number | null {
  return v === null ? null : Math.round(v * 10) / 10;
}
