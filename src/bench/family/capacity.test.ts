import assert from "node:assert/strict";
import { test } from "node:test";
import { fleetOf, replicaGroup } from "../scenarios/fleet-group.js";
import {
  enginePrefillTokensPerS,
  fleetContextWindow,
  fleetPrefillTokensPerS,
  usableContext,
} from "./capacity.js";
import { familyFleet } from "./fleet.js";

test("an engine prefills a full chunk per step: C·10⁶ / (β0 + β1·C) tokens per second", () => {
  const h100 = enginePrefillTokensPerS(replicaGroup("e", 1, "h100-llama8b", "m"));
  assert.ok(Math.abs(h100 - (8192 * 1e6) / (5753 + 17.25 * 8192)) < 1e-6);
  assert.equal(Math.round(h100), 55_703);
  const a100 = enginePrefillTokensPerS(replicaGroup("e", 1, "a100-llama8b", "m"));
  assert.equal(Math.round(a100), 17_899);
  // Overrides count: a bigger chunk spreads β0 thinner; no chunked prefill means max_model_len per step.
  const bigger = enginePrefillTokensPerS(
    replicaGroup("e", 1, "a100-llama8b", "m", { maxNumBatchedTokens: 8192 }),
  );
  assert.ok(bigger > a100);
  const whole = enginePrefillTokensPerS(
    replicaGroup("e", 1, "h100-llama8b", "m", { enableChunkedPrefill: false }),
  );
  assert.equal(Math.round(whole), Math.round((32_768 * 1e6) / (5753 + 17.25 * 32_768)));
});

test("a fleet's capacity is its engines' sum; its window the smallest", () => {
  const fleet = familyFleet("f00", "h100-llama8b", 4);
  assert.equal(fleet.groups[0]!.replicas, 4);
  assert.ok(Math.abs(fleetPrefillTokensPerS(fleet) - 4 * enginePrefillTokensPerS(fleet.groups[0]!)) < 1e-6);
  assert.equal(fleetContextWindow(fleet), 32_768);
  const mixed = fleetOf("x", [
    replicaGroup("a", 2, "h100-llama8b", "m"),
    replicaGroup("b", 1, "h100-14b", "m", { maxModelLen: 8192 }),
  ]);
  assert.equal(fleetContextWindow(mixed), 8192);
  assert.equal(usableContext(32_768), 32_768 - 328 - 64);
});
