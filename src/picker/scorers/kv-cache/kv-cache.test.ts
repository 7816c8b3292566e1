// Pins KV-cache headroom: 1 − KV use; predicted from in-flight tokens over capacity; neutral unknown.

import assert from "node:assert/strict";
import { it } from "node:test";
import { fakeEndpoint } from "../../../testing/fake-endpoint.js";
import { scoringContext } from "../../../testing/scoring-context.js";
import { kvCacheScorer } from "./kv-cache.js";

it("kv-cache scores 1 − KV use with fresh metrics", () => {
  const eps = [fakeEndpoint("a", { kvUsage: 0.25 }), fakeEndpoint("b", { kvUsage: 1 })];
  assert.deepEqual(kvCacheScorer().score(scoringContext(), eps), [0.75, 0]);
});

it("kv-cache predicts from in-flight tokens over the engine's capacity, else stays neutral", () => {
  const eps = [
    fakeEndpoint("a", { inflightTokens: 4000, numGpuBlocks: 500, blockSize: 16 }),
    fakeEndpoint("b", { numGpuBlocks: null }),
  ];
  assert.deepEqual(kvCacheScorer().score(scoringContext({ signals: "predicted" }), eps), [0.5, 0.5]);
  const full = [fakeEndpoint("a", { inflightTokens: 20_000, numGpuBlocks: 500, blockSize: 16 })];
  assert.deepEqual(kvCacheScorer().score(scoringContext({ signals: "predicted" }), full), [0]);
});
