// What the request path reads from the running gateway: the config in force, each pool's endpoints,
// and the shared services (metrics, log, identity, token correction, upstream connections).

import type { Dispatcher } from "undici";
import type { BudgetStore } from "../budget/budget-ledger.js";
import type { GatewayConfigSet } from "../config/config-set.js";
import type { RolloutStats } from "../control/rollout-gates.js";
import type { AdapterLoader } from "../endpoints/adapter-loader.js";
import type { EndpointState } from "../endpoints/endpoint-state.js";
import type { FlowControl } from "../flow/flow-control.js";
import type { Placement } from "../flow/placement.js";
import type { TokenCorrection } from "../profile/token-correction.js";
import type { GatewayMetrics } from "../telemetry/gateway-metrics.js";
import type { RegionWindow } from "../telemetry/region-window.js";
import type { RequestLog } from "../telemetry/request-log.js";
import type { HookSet } from "./hooks.js";
import type { Identifier } from "./identify.js";
import type { Generation, PoolRuntime } from "./pool-runtime.js";

export interface GatewayRuntime {
  /** The generation in force; a request reads it once, when it arrives, and keeps it. */
  readonly generation: Generation;
  /** The config, pools and flow of the generation in force. */
  readonly config: GatewayConfigSet;
  readonly pools: ReadonlyMap<string, PoolRuntime>;
  readonly metrics: GatewayMetrics;
  readonly log: RequestLog;
  readonly identifier: Identifier;
  readonly correction: TokenCorrection;
  /** Registers adapters on engines that lack them (pools whose loraAdapters name a path). */
  readonly adapterLoader: AdapterLoader;
  readonly flow: FlowControl<Placement>;
  /** Tenant budgets' accounting (budget-stage.ts). */
  readonly budgets: BudgetStore;
  /** What the requests of the rollout stage in force showed, for its gates. */
  readonly rollout: RolloutStats;
  /** The drain's deadline passed and the connections still open are being cut (logged as `shutdown`). */
  readonly cutting: boolean;
  /** The recent answers the region summary reports on (region-summary.ts). */
  readonly regionWindow: RegionWindow;
  /** The request pipeline's plugins, by hook point (hooks.ts, plugins/). */
  readonly hooks: HookSet;
  dispatcher(endpoint: EndpointState): Dispatcher;
  /** The connection pool of one origin (the legacy service's). */
  dispatcherFor(origin: string): Dispatcher;
}
