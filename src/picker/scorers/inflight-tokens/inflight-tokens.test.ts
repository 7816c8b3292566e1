// Pins in-flight tokens: relative to the busiest endpoint, with a floor for a nearly idle pool.

import assert from "node:assert/strict";
import { it } from "node:test";
import { fakeEndpoint } from "../../../testing/fake-endpoint.js";
import { scoringContext } from "../../../testing/scoring-context.js";
import { inflightTokensScorer } from "./inflight-tokens.js";

it("inflight-tokens scores 1 − tokens / busiest", () => {
  const eps = [
    fakeEndpoint("a", { inflightTokens: 0 }),
    fakeEndpoint("b", { inflightTokens: 20_000 }),
    fakeEndpoint("c", { inflightTokens: 40_000 }),
  ];
  assert.deepEqual(inflightTokensScorer().score(scoringContext(), eps), [1, 0.5, 0]);
});

it("inflight-tokens keeps small differences small below the floor", () => {
  const eps = [fakeEndpoint("a", { inflightTokens: 0 }), fakeEndpoint("b", { inflightTokens: 819.2 })];
  assert.deepEqual(inflightTokensScorer(8192).score(scoringContext(), eps), [1, 0.9]);
});
