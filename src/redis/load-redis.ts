// The `redis` client package, loaded the first time a store asks for it. A gateway with no Redis in its
// config never loads it: evaluating the package costs about 0.2 s of startup and 30 MB of memory.
// Synchronous (the package is CommonJS), so the stores' factories stay synchronous too.

import { createRequire } from "node:module";

type RedisModule = typeof import("redis");

let loaded: RedisModule | null = null;

/** The `redis` package's exports, required on first use. */
export function loadRedis(): RedisModule {
  loaded ??= createRequire(import.meta.url)("redis") as RedisModule;
  return loaded;
}
