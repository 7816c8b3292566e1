// The budget store a config asks for (GatewayConfig `budgets.store`): in memory for one process, or an
// SQLite file whose ledger survives a restart. Chosen at start; a reload changes the limits, not the store.

import type { GatewayConfigSet } from "../config/config-set.js";
import { type BudgetStore, MemoryBudgetStore } from "./budget-ledger.js";
import { SqliteBudgetStore } from "./sqlite-budget-store.js";

export function budgetStoreFor(config: GatewayConfigSet): BudgetStore {
  const s = config.gateway.budgets;
  if (s.store === "sqlite" && s.path !== null) return new SqliteBudgetStore(config.budgets, s.path);
  return new MemoryBudgetStore(config.budgets);
}
