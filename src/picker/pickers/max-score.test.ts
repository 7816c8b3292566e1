// Pins the pickers: highest total wins, ties go to a random one of the tied, no signal → p2c on load.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { fakeEndpoint, pickRequest, seededRandom } from "../../testing/fake-endpoint.js";
import { DEFAULT_COST_MODEL } from "../framework/cost-model.js";
import type { ScoringContext } from "../framework/types.js";
import { maxScorePicker, powerOfTwo } from "./max-score.js";

const sctx = (random: () => number): ScoringContext => ({
  request: pickRequest(),
  now: 0,
  random,
  signals: "metrics",
  matchedBlocks: [],
  delayMs: [],
  cost: DEFAULT_COST_MODEL,
});

describe("max-score picker", () => {
  it("picks the highest total", () => {
    const eps = ["a", "b", "c"].map((n) => fakeEndpoint(n));
    const c = maxScorePicker().pick(sctx(Math.random), eps, [0.2, 0.9, 0.5]);
    assert.deepEqual([c.index, c.how], [1, "max_score"]);
  });

  it("breaks ties at random among the tied only", () => {
    const eps = ["a", "b", "c", "d"].map((n) => fakeEndpoint(n));
    const totals = [0.9, 0.1, 0.9, 0.9];
    const seen = new Set<number>();
    const random = seededRandom(1);
    for (let i = 0; i < 200; i++) seen.add(maxScorePicker().pick(sctx(random), eps, totals).index);
    assert.deepEqual([...seen].sort(), [0, 2, 3]);
  });

  it("falls back to power of two choices when all totals are equal", () => {
    const eps = [fakeEndpoint("busy", { inflightTokens: 5000 }), fakeEndpoint("idle")];
    const c = maxScorePicker().pick(sctx(seededRandom(3)), eps, [1, 1]);
    assert.equal(c.how, "p2c");
    assert.equal(eps[c.index]!.name, "idle");
    assert.match(c.why, /no signal/);
  });
});

describe("powerOfTwo", () => {
  it("compares two distinct candidates and never picks the most loaded of a pair", () => {
    const eps = [
      fakeEndpoint("a", { inflightTokens: 10 }),
      fakeEndpoint("b", { inflightTokens: 20 }),
      fakeEndpoint("c", { inflightTokens: 30 }),
    ];
    const random = seededRandom(9);
    const counts = [0, 0, 0];
    for (let i = 0; i < 300; i++) counts[powerOfTwo(eps, random).index]!++;
    assert.equal(counts[2], 0, "the most loaded endpoint loses every pair");
    assert.ok(counts[0]! > counts[1]!);
  });
});
