import assert from "node:assert/strict";
import { test } from "node:test";
import { randomStream } from "../workload/distributions.js";
import {
  allocate,
  type PromptMix,
  promptMax,
  promptMean,
  promptQuantile,
  quotaLabels,
  stratifiedLengths,
} from "./lengths.js";

const light: PromptMix = { kind: "light", mean: 1000, spread: 0.5 };
const heavy: PromptMix = { kind: "heavy", min: 300, alpha: 1.2, max: 30_000 };
const bimodal: PromptMix = {
  kind: "bimodal",
  short: { mean: 200, spread: 0.5 },
  long: { mean: 8000, spread: 0.3 },
  longShare: 0.2,
};

test("quantiles rise from the mix's least length to its most", () => {
  for (const mix of [light, heavy, bimodal]) {
    let last = 0;
    for (let k = 0; k <= 1000; k++) {
      const q = promptQuantile(mix, Math.min(k / 1000, 1 - 1e-12));
      assert.ok(q >= last && q <= promptMax(mix) + 1e-6, `${mix.kind} at ${k}`);
      last = q;
    }
  }
  assert.equal(promptQuantile(light, 0), 500);
  assert.equal(promptQuantile(light, 0.5), 1000);
  assert.equal(promptQuantile(heavy, 0), 300);
  assert.equal(promptMax(bimodal), 10_400);
});

test("means: the triangle's centre, the mixture's weighted centres, the bounded Pareto's formula", () => {
  assert.ok(Math.abs(promptMean(light) - 1000) < 1);
  assert.ok(Math.abs(promptMean(bimodal) - (0.8 * 200 + 0.2 * 8000)) < 1);
  const { min: l, alpha: a, max: h } = heavy as Extract<PromptMix, { kind: "heavy" }>;
  const exact = ((a * l ** a) / (a - 1)) * ((l ** (1 - a) - h ** (1 - a)) / (1 - (l / h) ** a));
  assert.ok(Math.abs(promptMean(heavy) / exact - 1) < 0.01, `${promptMean(heavy)} vs ${exact}`);
});

test("stratified lengths hold the mix's mean: light ones in 40 draws, a heavy tail in 200", () => {
  // The top band of a heavy tail still spans thousands of tokens in 40 draws (up to ±40% for a Pareto
  // from 300 tokens); in 200 it is within ~5%. The generator's rates give it hundreds at least.
  for (const [mix, n, tolerance] of [
    [light, 40, 0.02],
    [bimodal, 40, 0.03],
    [heavy, 200, 0.08],
  ] as const) {
    for (let seed = 1; seed <= 20; seed++) {
      const xs = stratifiedLengths(mix, n, randomStream(seed, "lengths"));
      assert.equal(xs.length, n);
      const mean = xs.reduce((a, x) => a + x, 0) / xs.length;
      assert.ok(Math.abs(mean / promptMean(mix) - 1) < tolerance, `${mix.kind} seed ${seed}: ${mean}`);
    }
  }
  const xs = stratifiedLengths(bimodal, 100, randomStream(1, "lengths"));
  assert.equal(xs.filter((x) => x > 2000).length, 20, "exactly the long share");
  assert.notDeepEqual(
    xs,
    [...xs].sort((a, b) => a - b),
    "in random order",
  );
});

test("quotas: whole counts in proportion that sum to n, labels shuffled", () => {
  assert.deepEqual(allocate(10, [0.5, 0.3, 0.2]), [5, 3, 2]);
  assert.deepEqual(allocate(3, [1, 1, 1, 1]), [1, 1, 1, 0]);
  assert.deepEqual(allocate(0, [1, 2]), [0, 0]);
  const counts = allocate(1001, [0.123, 0.456, 0.421]);
  assert.equal(
    counts.reduce((a, c) => a + c, 0),
    1001,
  );
  assert.deepEqual(counts, [123, 457, 421]);
  const labels = quotaLabels(["a", "b", "c"], counts, randomStream(3, "labels"));
  assert.equal(labels.length, 1001);
  assert.equal(labels.filter((x) => x === "b").length, 457);
  assert.notEqual(labels.slice(0, 123).join(""), "a".repeat(123));
});
