// `tokengate_inflight_requests{pool,endpoint}`: up while an attempt runs on its endpoint.

import type { HookFactory } from "./hook-factory.js";

export const inflightGauge: HookFactory = (gw) => ({
  name: "inflight-gauge",
  attempt(a) {
    const gauge = gw.metrics.inflight.labels(a.plan.decision.pool, a.endpoint.name);
    gauge.inc();
    return () => gauge.dec();
  },
});
