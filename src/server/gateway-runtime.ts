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
import type { EndpointPickerConfig } from "../picker/config/endpoint-picker-config.js";
import type { PickerProfile } from "../picker/framework/types.js";
import type { PrefixIndex } from "../picker/prefix-index/prefix-index.js";
import type { TokenCorrection } from "../profile/token-correction.js";
import type { RetryBudget } from "../proxy/retry-budget.js";
import type { GatewayMetrics } from "../telemetry/gateway-metrics.js";
import type { RequestLog } from "../telemetry/request-log.js";
import type { Identifier } from "./identify.js";

/** A pool's endpoint picker: its config, the plugins built from it, and what it learned of prefixes. */
export interface PoolPicker {
  readonly config: EndpointPickerConfig;
  readonly profile: PickerProfile;
  readonly index: PrefixIndex;
  /** Request header whose value keys session affinity, when configured (lowercase). */
  readonly sessionHeader: string | null;
}

export interface PoolRuntime {
  readonly name: string;
  readonly endpoints: EndpointState[];
  readonly retryBudget: RetryBudget;
  readonly picker: PoolPicker;
}

/** A config and what was built from it; a reload swaps the whole of it (generation.ts). */
export interface Generation {
  readonly config: GatewayConfigSet;
  readonly pools: ReadonlyMap<string, PoolRuntime>;
  readonly flow: FlowControl<Placement>;
  /** Every engine, once (pools that borrow share the owner's state), with the pools that use it. */
  readonly engines: ReadonlyMap<EndpointState, readonly string[]>;
  /** Whether a request may go to the legacy service (a rollout stage or a route rollback): the stage runs. */
  readonly staged: boolean;
}

import type { RegionWindow } from "./region-window.js";

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
  dispatcher(endpoint: EndpointState): Dispatcher;
  /** The connection pool of one origin (the legacy service's). */
  dispatcherFor(origin: string): Dispatcher;
}
