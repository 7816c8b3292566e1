// What this gateway tells a `tokengate director` about its region (`GET /admin/region/summary`, no
// token, like /metrics): the models and versions it serves and whether each can take traffic, each
// pool's headroom as one comparable number, the TTFT P95 and error rate of its recent requests, and
// whether it is draining — summaries only, never per-pod queues or KV state, which go stale across a WAN
// (seed 000). Computed when asked, from the generation in force.

import type { PoolFlowSettings } from "../config/inference-pool.js";
import type { PoolHeadroom, RegionModel, RegionSummary } from "../director/director-types.js";
import type { EndpointState } from "../endpoints/endpoint-state.js";
import { saturationOf, waitBoundMs } from "../flow/saturation.js";
import type { PoolRuntime } from "../pipeline/pool-runtime.js";
import type { GatewayRuntime } from "../pipeline/runtime.js";
import type { RegionWindow } from "../telemetry/region-window.js";

/** The summary of the region this gateway serves, now. */
export function regionSummary(
  gw: GatewayRuntime,
  window: RegionWindow,
  opts: { region: string; draining: boolean },
  now = Date.now(),
): RegionSummary {
  const config = gw.config;
  const pools = [...gw.pools.values()].map((p) => poolHeadroom(gw, p, now));
  const byPool = new Map(pools.map((p) => [p.pool, p]));
  const models: RegionModel[] = [];
  const headroomByModel: Record<string, number> = {};
  for (const [alias, a] of config.route.aliases) {
    const versions = new Map<string, boolean>();
    let best = 0;
    let ready = false;
    for (const target of a.pools) {
      const pool = gw.pools.get(target.name);
      if (!pool) continue;
      const poolConfig = config.pools.get(target.name);
      for (const ep of pool.endpoints) {
        const v = ep.modelVersion ?? poolConfig?.modelVersion ?? "unknown";
        const routable = ep.routable(now);
        versions.set(v, (versions.get(v) ?? false) || routable);
        ready ||= routable;
      }
      best = Math.max(best, byPool.get(target.name)?.headroom ?? 0);
    }
    models.push({
      alias,
      versions: [...versions].map(([version, r]) => ({ version, ready: r })),
      ready,
    });
    headroomByModel[alias] = ready && !opts.draining ? best : 0;
  }
  return {
    region: opts.region,
    computedAt: now,
    draining: opts.draining,
    configVersion: config.version,
    models,
    pools,
    headroomByModel,
    window: window.summary(now),
  };
}

function poolHeadroom(gw: GatewayRuntime, pool: PoolRuntime, now: number): PoolHeadroom {
  const flow = gw.flow.pools.get(pool.name);
  const bounds = flow?.settings;
  let free = 0;
  let routable = 0;
  let slots = 0;
  for (const ep of pool.endpoints) {
    if (!ep.routable(now)) continue;
    routable++;
    const use = bounds ? highestUse(ep, bounds, now) : 0;
    free += Math.max(0, 1 - use);
    if (!bounds || saturationOf(ep, bounds, 0, now) === null) slots++;
  }
  const queued = flow?.depth ?? 0;
  const queueRoom =
    bounds && bounds.maxQueuedRequests > 0 ? Math.max(0, 1 - queued / bounds.maxQueuedRequests) : 1;
  const n = pool.endpoints.length;
  return {
    pool: pool.name,
    headroom: n === 0 ? 0 : round3((free / n) * queueRoom),
    freeSlots: slots,
    routableEndpoints: routable,
    endpoints: n,
    queued,
  };
}

/** The endpoint's highest use of a bound, 0..1 (1: at or past one). */
function highestUse(ep: EndpointState, b: PoolFlowSettings, now: number): number {
  const uses: number[] = [];
  if (b.maxInflight !== null) uses.push(ep.inflightRequests / b.maxInflight);
  if (b.maxInflightTokens !== null) uses.push(ep.inflightTokens / b.maxInflightTokens);
  const waiting = ep.freshWaiting(now);
  if (waiting !== null) uses.push(waiting / b.maxWaiting);
  if (ep.kvUsage !== null) uses.push(ep.kvUsage / b.maxKvCacheUsage);
  const waitBound = waitBoundMs(ep, b);
  if (waitBound !== null) uses.push(ep.predictedWaitMs(now) / Math.max(1, waitBound));
  return Math.min(1, Math.max(0, ...uses));
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
