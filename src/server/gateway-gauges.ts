// The gauges read when /metrics is scraped: the event loop's delays, each pool's queue by band and its
// batch pauses, each engine's health, KV use and prefill view, the token estimate's correction, the
// budget store's health, and what Kubernetes discovery has found.

import type { BudgetStore } from "../budget/budget-ledger.js";
import type { DiscoveryStatus } from "../discovery/inference-pool-discovery.js";
import type { Generation } from "../pipeline/pool-runtime.js";
import type { TokenCorrection } from "../profile/token-correction.js";
import type { GatewayMetrics } from "../telemetry/gateway-metrics.js";
import type { LoopDelayWindow } from "../telemetry/loop-delay.js";
import type { FoundEndpoint } from "./discovered-config.js";

/** Sets every gauge from the generation in force (called by the registry at scrape time). */
export function collectGauges(
  m: GatewayMetrics,
  gen: Generation,
  d: LoopDelayWindow,
  correction: TokenCorrection,
  budgets: BudgetStore,
  discovery: ReadonlyMap<string, DiscoveryStatus>,
  found: ReadonlyMap<string, readonly FoundEndpoint[]>,
): void {
  for (const [pool, st] of discovery) {
    m.discoverySynced.labels(pool).set(st.synced ? 1 : 0);
    m.discoveryApiReachable.labels(pool).set(st.connected ? 1 : 0);
    const eps = found.get(pool) ?? [];
    for (const state of ["ready", "draining"] as const)
      m.discoveryEndpoints.labels(pool, state).set(eps.filter((e) => e.state === state).length);
  }
  m.budgetStoreUp.labels(budgets.kind).set(budgets.up === true ? 1 : 0);
  if (d.maxMs !== null) {
    const s = (ms: number) => Math.round(ms * 1000) / 1e6; // µs precision, printed without float noise
    m.eventLoopDelay.labels("0.5").set(s(d.p50Ms!));
    m.eventLoopDelay.labels("0.99").set(s(d.p99Ms!));
    m.eventLoopDelay.labels("1").set(s(d.maxMs));
  }
  for (const [name, flow] of gen.flow.pools) {
    for (const b of flow.bandSizes()) m.queueDepth.labels(name, String(b.priority)).set(b.size);
  }
  for (const gate of gen.flow.gates.values()) {
    m.queuePaused.labels(gate.pool, gate.rule).set(gate.paused ? 1 : 0);
    if (gate.lastP95Ms !== null)
      m.queueWatchedTtftP95.labels(gate.pool, gate.rule, gate.when.pool).set(gate.lastP95Ms / 1000);
  }
  for (const pool of gen.pools.values()) {
    for (const e of pool.endpoints) {
      m.endpointHealthy.labels(pool.name, e.name).set(e.healthy ? 1 : 0);
      if (e.kvUsage !== null) m.kvCacheUsedRatio.labels(pool.name, e.name).set(e.kvUsage);
      m.pendingPrefillTokens.labels(pool.name, e.name).set(e.prefill.pendingTokens);
      m.decodingRequests.labels(pool.name, e.name).set(e.prefill.decoding);
      m.prefillMsPerKToken.labels(pool.name, e.name).set(e.prefill.prefillMsPerKToken());
    }
  }
  for (const s of correction.stats()) {
    m.tokenCorrectionFactor.labels(s.model).set(s.factor);
    m.tokenEstimateError.labels(s.model).set(s.p90RelativeError);
  }
}
