// A config with the engines discovery found put in: each pool with `discovery` gets the Ready pods of
// its InferencePool as its `endpoints`, named by pod (and port, when the pool targets several), so the
// generation machinery — new engines health-checked before they take traffic, removed ones drained
// while their streams finish (gateway.ts reload) — treats a pod that comes and goes as a reload would.
// A pod that is draining (not ready, or being deleted) is not listed: no new request goes to it, and
// the requests on it finish on the engine state they hold.

import type { GatewayConfigSet } from "../config/config-set.js";
import type { InferencePoolConfig, PoolEndpoint } from "../config/inference-pool.js";
import type { DiscoveredEndpoint } from "../discovery/pod-endpoints.js";

/** One engine as discovery reports it. */
export type FoundEndpoint = Pick<DiscoveredEndpoint, "url" | "address" | "pod" | "state">;

/** `config` with each discovered pool's endpoints replaced by its Ready pods in `found` (none yet: none). */
export function withDiscovered(
  config: GatewayConfigSet,
  found: ReadonlyMap<string, readonly FoundEndpoint[]>,
): GatewayConfigSet {
  let changed = false;
  const pools = new Map<string, InferencePoolConfig>();
  for (const [name, pool] of config.pools) {
    if (pool.discovery === null) {
      pools.set(name, pool);
      continue;
    }
    changed = true;
    pools.set(name, { ...pool, endpoints: endpointsOf(found.get(name) ?? []) });
  }
  return changed ? { ...config, pools } : config;
}

/** Ready pods as pool endpoints, named by pod, `pod:port` when a pod has several. */
export function endpointsOf(found: readonly FoundEndpoint[]): PoolEndpoint[] {
  const ready = found.filter((f) => f.state === "ready");
  const perPod = new Map<string, number>();
  for (const f of ready) perPod.set(f.pod, (perPod.get(f.pod) ?? 0) + 1);
  const seen = new Set<string>();
  const out: PoolEndpoint[] = [];
  for (const f of ready) {
    if (seen.has(f.url)) continue;
    seen.add(f.url);
    const port = f.address.slice(f.address.lastIndexOf(":") + 1);
    out.push({ name: perPod.get(f.pod)! > 1 ? `${f.pod}:${port}` : f.pod, url: f.url, modelVersion: null });
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}
