// Pins LoRA affinity: running 1, free slot 0.8, queued 0.6, full 0, unknown 0.5, no adapter 1.

import assert from "node:assert/strict";
import { it } from "node:test";
import { fakeEndpoint } from "../../../testing/fake-endpoint.js";
import { scoringContext } from "../../../testing/scoring-context.js";
import { loraAffinityScorer } from "./lora-affinity.js";

it("lora-affinity follows GIE's tiers", () => {
  const eps = [
    fakeEndpoint("running", { loras: { max: 2, running: ["x", "y"], waiting: [] } }),
    fakeEndpoint("free", { loras: { max: 2, running: ["y"], waiting: [] } }),
    fakeEndpoint("queued", { loras: { max: 2, running: ["y"], waiting: ["x"] } }),
    fakeEndpoint("full", { loras: { max: 2, running: ["y", "z"], waiting: [] } }),
    fakeEndpoint("unknown"),
  ];
  assert.deepEqual(
    loraAffinityScorer().score(scoringContext({ request: { lora: "x" } }), eps),
    [1, 0.8, 0.6, 0, 0.5],
  );
  assert.deepEqual(loraAffinityScorer().score(scoringContext(), eps), [1, 1, 1, 1, 1]);
});
