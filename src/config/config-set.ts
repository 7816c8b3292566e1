// GatewayConfigSet: everything the gateway runs from, validated and frozen; built only from a config with
// no errors, so a failed reload never yields a half-built value.
import type { BudgetConfig } from "../budget/budget-types.js";
import type { EndpointPickerConfig } from "../picker/config/endpoint-picker-config.js";
import type { GatewaySettings } from "./gateway-settings.js";
import type { InferencePoolConfig } from "./inference-pool.js";
import type { RouteConfig } from "./route-types.js";

/** Where each document came from, for `config validate` and the admin API. */
export interface DocumentSummary {
  readonly file: string;
  readonly line: number;
  readonly kind: string;
  /** null for skipped documents. */
  readonly name: string | null;
  /** true for kinds read elsewhere (`SimFleet`). */
  readonly skipped: boolean;
}

export interface GatewayConfigSet {
  /** The route config version (`ai.example.com/route-config-version`), for logs and rollback. */
  readonly version: string;
  readonly route: RouteConfig;
  /** InferencePool documents by name. */
  readonly pools: ReadonlyMap<string, InferencePoolConfig>;
  /** The GatewayConfig document, or defaults when there is none. */
  readonly gateway: GatewaySettings;
  /** Each pool's endpoint picker (EndpointPicker documents, or the defaults). */
  readonly pickers: ReadonlyMap<string, EndpointPickerConfig>;
  /** Every InferenceBudget document's tenants, merged (no documents: no tenant has a budget). */
  readonly budgets: BudgetConfig;
  /** Files read, in order. */
  readonly sources: readonly string[];
  readonly documents: readonly DocumentSummary[];
}

/** Each pool's highest priority under any model alias (0 for a pool no alias names). */
export function poolPriorities(config: Pick<GatewayConfigSet, "route">): Map<string, number> {
  const out = new Map<string, number>();
  for (const alias of config.route.aliases.values())
    for (const p of alias.pools) out.set(p.name, Math.max(out.get(p.name) ?? 0, p.priority));
  return out;
}
