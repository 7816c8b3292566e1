import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { describe, it } from "node:test";
import { batchStoreFor } from "../batch/batch-store-for.js";
import { budgetStoreFor } from "../budget/budget-store.js";
import { loadRedis } from "./load-redis.js";

const loadedRedis = () =>
  Object.keys(createRequire(import.meta.url).cache).filter((k) => k.includes("/node_modules/redis/"));

describe("loadRedis", () => {
  it("the Redis stores' modules do not load the redis package until a store asks for it", () => {
    // Imported above, as a gateway with no Redis in its config imports them.
    assert.equal(typeof batchStoreFor, "function");
    assert.equal(typeof budgetStoreFor, "function");
    assert.deepEqual(loadedRedis(), []);
    const redis = loadRedis();
    assert.equal(typeof redis.createClient, "function");
    assert.ok(loadedRedis().length > 0);
    assert.equal(loadRedis(), redis, "loaded once");
  });
});
