// Pins LoRA affinity: running 1, free slot 0.3, queued 0.2, full 0, unknown 0.3, no adapter 1.

import assert from "node:assert/strict";
import { it } from "node:test";
import { fakeEndpoint } from "../../../testing/fake-endpoint.js";
import { scoringContext } from "../../../testing/scoring-context.js";
import { loraAffinityScorer } from "./lora-affinity.js";

it("lora-affinity ranks running over a free slot over a queue over none", () => {
  const eps = [
    fakeEndpoint("running", { loras: { max: 2, running: ["x", "y"], waiting: [] } }),
    fakeEndpoint("free", { loras: { max: 2, running: ["y"], waiting: [] } }),
    fakeEndpoint("queued", { loras: { max: 2, running: ["y"], waiting: ["x"] } }),
    fakeEndpoint("full", { loras: { max: 2, running: ["y", "z"], waiting: [] } }),
    fakeEndpoint("unknown"),
  ];
  assert.deepEqual(
    loraAffinityScorer().score(scoringContext({ request: { lora: "x" } }), eps),
    [1, 0.3, 0.2, 0, 0.3],
  );
  assert.deepEqual(loraAffinityScorer().score(scoringContext(), eps), [1, 1, 1, 1, 1]);
});
