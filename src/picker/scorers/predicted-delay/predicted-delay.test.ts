// Pins predicted delay: queue wait plus uncached prefill, so a warm cache can beat a short queue.

import assert from "node:assert/strict";
import { it } from "node:test";
import { fakeEndpoint } from "../../../testing/fake-endpoint.js";
import { scoringContext } from "../../../testing/scoring-context.js";
import { predictedDelayMs } from "../../framework/cost-model.js";
import { predictedDelayScorer } from "./predicted-delay.js";

it("predicted delay is queue wait plus prefill of the uncached tokens", () => {
  const cost = { prefillMsPerToken: 0.1, waitingRequestMs: 100, tokensPerBlock: 16 };
  const e = fakeEndpoint("a", { waiting: 2 });
  assert.equal(predictedDelayMs(e, 0, 8000, "metrics", cost, 0), 200 + 800);
  assert.equal(predictedDelayMs(e, 500, 8000, "metrics", cost, 0), 200);
  assert.equal(predictedDelayMs(e, 600, 8000, "metrics", cost, 0), 200, "never below the queue wait");
});

it("predicted delay is the endpoint's own prediction when it makes one, for the uncached tokens", () => {
  const cost = { prefillMsPerToken: 0.1, waitingRequestMs: 100, tokensPerBlock: 16 };
  const seen: number[] = [];
  const e = {
    ...fakeEndpoint("a", { waiting: 2 }),
    predictTtftMs: (uncached: number) => {
      seen.push(uncached);
      return 42;
    },
  };
  assert.equal(predictedDelayMs(e, 100, 8000, "metrics", cost, 0), 42);
  assert.deepEqual(seen, [8000 - 1600]);
});

it("predicted-delay prefers a warm endpoint with a short queue over a cold idle one", () => {
  // 8000-token prompt: cold idle costs 800 ms; warm with 2 waiting costs 200 ms + 0.
  const eps = [
    fakeEndpoint("warm", { waiting: 2 }),
    fakeEndpoint("cold"),
    fakeEndpoint("busy", { waiting: 20 }),
  ];
  const ctx = scoringContext({ request: { inputTokens: 8000 }, matchedBlocks: [500, 0, 500] });
  const s = predictedDelayScorer().score(ctx, eps);
  assert.equal(s[0], 1);
  assert.equal(s[2], 0);
  assert.ok(s[1]! > 0 && s[1]! < 1);
});
