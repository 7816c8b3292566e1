// The candidates stage: which of the pool's endpoints can serve the plan's target — its version (a pinned
// version is never served by another) and its adapter (registered on the engine, or with a `path` the
// gateway registers it from) — and the errors when none can.

import type { EndpointState } from "../endpoints/endpoint-state.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { RequestPlan } from "../plan/request-plan.js";
import type { PoolRuntime } from "./pool-runtime.js";

/** The pool's endpoints that can serve the plan's target. None: a clear error now. */
export function servingEndpoints(pool: PoolRuntime, plan: RequestPlan): readonly EndpointState[] {
  const { decision } = plan;
  const version = decision.target.modelVersion;
  const adapter = decision.target.adapter;
  // The common case — no pinned version, no adapter — takes the pool as it is, without a copy.
  if (version === null && adapter === null) return pool.endpoints;
  const loadable = adapter !== null && decision.adapterPath !== null;
  const serving = pool.endpoints.filter(
    (e) =>
      (version === null || e.modelVersion === version) &&
      (adapter === null || loadable || e.servedAdapters === null || e.servedAdapters.has(adapter)),
  );
  if (serving.length > 0) return serving;
  if (version !== null && !pool.endpoints.some((e) => e.modelVersion === version)) {
    const running = [...new Set(pool.endpoints.map((e) => e.modelVersion ?? "unknown"))];
    throw new GatewayError(
      "model_version_unavailable",
      `no endpoint of pool ${decision.pool} runs ${version} (model ${decision.modelAlias}); running: ${running.join(", ")}`,
      { route: decision.pool, retryAfterSeconds: 5, fallbackOptions: ["retry_later"] },
    );
  }
  throw noEndpointError(decision.pool, `no endpoint has adapter ${adapter} registered`, null);
}

/**
 * No endpoint can serve the request: none is routable, or (`endpointsTried` > 0, the error's
 * `endpoints_tried`) each one tried failed it — the engines failed, which a caller that retries (the
 * batch runner) counts as an attempt rather than as a wait.
 */
export function noEndpointError(
  pool: string,
  why: string,
  backupPool: string | null,
  endpointsTried = 0,
): GatewayError {
  return new GatewayError("no_healthy_endpoint", `pool ${pool}: ${why}`, {
    route: pool,
    retryAfterSeconds: 1,
    fallbackOptions: backupPool ? [`pool:${backupPool}`, "retry_later"] : ["retry_later"],
    ...(endpointsTried > 0 ? { details: { endpoints_tried: endpointsTried } } : {}),
  });
}
