// A generation's pools as the request path sees them: each pool's endpoints, retry budget and picker,
// and the generation (a config and what was built from it) a request keeps from arrival to end.

import type { GatewayConfigSet } from "../config/config-set.js";
import type { EndpointState } from "../endpoints/endpoint-state.js";
import type { FlowControl } from "../flow/flow-control.js";
import type { Placement } from "../flow/placement.js";
import type { EndpointPickerConfig } from "../picker/config/endpoint-picker-config.js";
import type { PickerProfile } from "../picker/framework/types.js";
import type { PrefixIndex } from "../picker/prefix-index/prefix-index.js";
import type { RetryBudget } from "../proxy/retry-budget.js";

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
