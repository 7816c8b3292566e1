// Pins prefix affinity: matched leading blocks over the prompt's blocks, 0 without a prompt to match.

import assert from "node:assert/strict";
import { it } from "node:test";
import { fakeEndpoint } from "../../../testing/fake-endpoint.js";
import { scoringContext } from "../../../testing/scoring-context.js";
import { prefixAffinityScorer } from "./prefix-affinity.js";

it("prefix-affinity scores the share of prompt blocks each endpoint holds", () => {
  const eps = ["a", "b", "c"].map((n) => fakeEndpoint(n));
  const ctx = scoringContext({ request: { blockHashes: [1, 2, 3, 4] }, matchedBlocks: [4, 1, 0] });
  assert.deepEqual(prefixAffinityScorer().score(ctx, eps), [1, 0.25, 0]);
  assert.deepEqual(
    prefixAffinityScorer().score(scoringContext({ matchedBlocks: [0, 0, 0] }), eps),
    [0, 0, 0],
  );
  assert.equal(prefixAffinityScorer().category, "affinity");
});
