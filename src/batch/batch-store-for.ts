// The batch store a config asks for (GatewayConfig `batches.store`): an SQLite file, or the Redis server
// of `budgets.redis` (its namespace, `:batch` added) shared by replicas on any host. Opened at start; a
// reload changes the runner's settings, not the store.

import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import type { GatewayConfigSet } from "../config/config-set.js";
import type { BatchStore } from "./batch-store.js";
import { RedisBatchStore } from "./redis-batch-store.js";
import { SqliteBatchStore } from "./sqlite-batch-store.js";

/** The configured store, opened; null when the Batch API is off. */
export function batchStoreFor(config: GatewayConfigSet): BatchStore | null {
  const s = config.gateway.batches;
  const redis = config.gateway.budgets.redis;
  if (s.store === "redis" && redis.url !== null) {
    return new RedisBatchStore({
      url: redis.url,
      namespace: `${redis.namespace}:batch`,
      // Not the budgets' admission timeout (250 ms unless told): a call here may move a 1 MiB piece.
      timeoutMs: Math.max(5000, redis.timeoutMs),
    });
  }
  if (s.path === null) return null;
  mkdirSync(dirname(s.path), { recursive: true });
  return SqliteBatchStore.open(s.path);
}
