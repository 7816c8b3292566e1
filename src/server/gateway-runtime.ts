// What the request path reads from the running gateway: the config in force, each pool's endpoints,
// and the shared services (metrics, log, identity, token correction, upstream connections).

import type { Dispatcher } from "undici";
import type { GatewayConfigSet } from "../config/config-set.js";
import type { EndpointState } from "../endpoints/endpoint-state.js";
import type { TokenCorrection } from "../profile/token-correction.js";
import type { RetryBudget } from "../proxy/retry-budget.js";
import type { GatewayMetrics } from "../telemetry/gateway-metrics.js";
import type { RequestLog } from "../telemetry/request-log.js";
import type { Identifier } from "./identify.js";

export interface PoolRuntime {
  readonly name: string;
  readonly endpoints: EndpointState[];
  readonly retryBudget: RetryBudget;
}

export interface GatewayRuntime {
  readonly config: GatewayConfigSet;
  readonly pools: ReadonlyMap<string, PoolRuntime>;
  readonly metrics: GatewayMetrics;
  readonly log: RequestLog;
  readonly identifier: Identifier;
  readonly correction: TokenCorrection;
  dispatcher(endpoint: EndpointState): Dispatcher;
}
