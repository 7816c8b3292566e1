// What the gateway does when an endpoint's requests fail, wired per engine: its pools drop its
// prefix-affinity claims when it goes out (down or ejected), an ejection that would take more than a
// pool's `maxEjectionPercent` out is refused — the pool keeps every endpoint ("panics", as Envoy does)
// and says so once — and the endpoint's own events (marked down by a request, circuit changes) become
// log events and metrics.

import type { EndpointState } from "../endpoints/endpoint-state.js";
import type { PoolRuntime } from "../pipeline/pool-runtime.js";
import type { GatewayMetrics } from "../telemetry/gateway-metrics.js";
import type { RequestLog } from "../telemetry/request-log.js";

/** How long a pool's panic is reported as current after an ejection was last refused. */
const PANIC_REPORT_MS = 10_000;

const CIRCUIT_VALUE = { closed: 0, open: 1, half_open: 2 } as const;

export function wirePassiveHealth(
  poolsOf: ReadonlyMap<EndpointState, readonly PoolRuntime[]>,
  maxEjectionPercent: (pool: string) => number,
  log: RequestLog,
  metrics: GatewayMetrics,
): void {
  const panicSince = new Map<string, number>();
  for (const [ep, pools] of poolsOf) {
    ep.onOut = () => {
      for (const p of pools) p.picker.index.removeEndpoint(ep.name);
    };
    ep.ejectionAllowed = () => {
      const now = Date.now();
      let allowed = true;
      for (const p of pools) {
        const out = p.endpoints.filter((e) => e !== ep && e.health.ejected(now)).length;
        // At least one endpoint may always be ejected, whatever the share (Envoy's rule).
        if (out === 0 || ((out + 1) / p.endpoints.length) * 100 <= maxEjectionPercent(p.name)) continue;
        allowed = false;
        const last = panicSince.get(p.name);
        if (last === undefined || now - last > PANIC_REPORT_MS) {
          log.event("pool.panic", {
            pool: p.name,
            endpoint: ep.name,
            ejected: out,
            endpoints: p.endpoints.length,
            max_ejection_percent: maxEjectionPercent(p.name),
            reason: "ejecting this endpoint would pass maxEjectionPercent: every endpoint stays in",
          });
        }
        panicSince.set(p.name, now);
        metrics.ejectionsCapped.labels(p.name).inc();
      }
      return allowed;
    };
    ep.onEvent = (event, fields) => {
      log.event(event, { pool: ep.pool, endpoint: ep.name, ...fields });
      if (event.startsWith("endpoint.circuit-")) {
        for (const p of pools)
          metrics.circuitState.labels(p.name, ep.name).set(CIRCUIT_VALUE[ep.health.breaker.state]);
      }
    };
  }
}
