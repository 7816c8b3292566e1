// The budget store a config asks for (GatewayConfig `budgets.store`): in memory for one process, an SQLite
// file whose ledger survives a restart, or Redis shared by replicas. Chosen at start; a reload changes the
// limits, not the store.

import type { GatewayConfigSet } from "../config/config-set.js";
import { type BudgetStore, MemoryBudgetStore } from "./budget-ledger.js";
import { RedisBudgetStore } from "./redis-budget-store.js";
import { SqliteBudgetStore } from "./sqlite-budget-store.js";

export function budgetStoreFor(
  config: GatewayConfigSet,
  onEvent: (event: string, fields: Record<string, unknown>) => void = () => {},
): BudgetStore {
  const s = config.gateway.budgets;
  if (s.store === "sqlite" && s.path !== null) return new SqliteBudgetStore(config.budgets, s.path);
  if (s.store === "redis" && s.redis.url !== null) {
    return new RedisBudgetStore(config.budgets, { ...s.redis, url: s.redis.url, onEvent });
  }
  return new MemoryBudgetStore(config.budgets);
}
