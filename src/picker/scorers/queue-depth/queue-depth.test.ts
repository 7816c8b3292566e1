// Pins queue depth: min-max normalised, the scraped queue blended with the gateway's own burst.

import assert from "node:assert/strict";
import { it } from "node:test";
import { fakeEndpoint } from "../../../testing/fake-endpoint.js";
import { scoringContext } from "../../../testing/scoring-context.js";
import { queueDepthScorer } from "./queue-depth.js";

it("queue-depth gives the shortest queue 1, the longest 0 and all-equal queues 1", () => {
  const eps = [
    fakeEndpoint("a", { waiting: 0 }),
    fakeEndpoint("b", { waiting: 5 }),
    fakeEndpoint("c", { waiting: 10 }),
  ];
  assert.deepEqual(queueDepthScorer().score(scoringContext(), eps), [1, 0.5, 0]);
  const even = [fakeEndpoint("a", { waiting: 3 }), fakeEndpoint("b", { waiting: 3 })];
  assert.deepEqual(queueDepthScorer().score(scoringContext(), even), [1, 1]);
});

it("queue-depth counts requests sent since the scrape beyond the running batch", () => {
  // a's scrape says an empty queue, but the gateway has sent it 12 requests against 4 running.
  const eps = [
    fakeEndpoint("a", { waiting: 0, running: 4, inflightRequests: 12 }),
    fakeEndpoint("b", { waiting: 2 }),
  ];
  assert.deepEqual(queueDepthScorer().score(scoringContext(), eps), [0, 1]);
});

it("queue-depth uses only the gateway's in-flight count when metrics are stale", () => {
  const eps = [
    fakeEndpoint("a", { waiting: 50, inflightRequests: 1 }),
    fakeEndpoint("b", { waiting: 0, inflightRequests: 3 }),
  ];
  assert.deepEqual(queueDepthScorer().score(scoringContext({ signals: "predicted" }), eps), [1, 0]);
});
