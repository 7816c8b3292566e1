// Pins the online fit: it recovers a linear law from noisy observations, and with forgetting it follows
// the law when it changes instead of averaging old and new.

import assert from "node:assert/strict";
import { it } from "node:test";
import { seededRandom } from "../testing/fake-endpoint.js";
import { OnlineLinear } from "./online-linear.js";

const law = (w: number[]) => (x: number[]) => w.reduce((s, wi, i) => s + wi * x[i]!, 0);

it("recovers the weights of a linear law from noisy observations", () => {
  const random = seededRandom(7);
  const truth = law([30, 17, 5, 2]);
  const fit = new OnlineLinear({ prior: [20, 100, 0, 0], forgetting: 0.99, priorVariance: 1e4 });
  for (let i = 0; i < 400; i++) {
    const p = random() * 20;
    const d = random() * 3;
    const x = [1, p, d, p * d];
    fit.observe(x, truth(x) * (0.95 + 0.1 * random()));
  }
  assert.equal(fit.observations, 400);
  for (const x of [
    [1, 1, 0, 0],
    [1, 10, 1, 10],
    [1, 18, 2.5, 45],
  ]) {
    const err = Math.abs(fit.predict(x) - truth(x)) / truth(x);
    assert.ok(err < 0.05, `prediction at ${x} within 5% (got ${(err * 100).toFixed(1)}%)`);
  }
});

it("follows a law that changes mid-run", () => {
  const random = seededRandom(11);
  const fast = law([10, 17]);
  const slow = law([25, 48]);
  const fit = new OnlineLinear({ prior: [0, 0], forgetting: 0.98, priorVariance: 1e4 });
  const feed = (f: (x: number[]) => number, n: number) => {
    for (let i = 0; i < n; i++) {
      const x = [1, random() * 10];
      fit.observe(x, f(x));
    }
  };
  feed(fast, 300);
  assert.ok(Math.abs(fit.predict([1, 5]) - fast([1, 5])) < 1);
  feed(slow, 150);
  // Weighted least squares with λ = 0.98: what 150 observations ago says weighs 0.98^150 ≈ 5%.
  assert.ok(Math.abs(fit.predict([1, 5]) - slow([1, 5])) / slow([1, 5]) < 0.05, "now the slow law");
});

it("ignores an observation that is not a number and refuses a bad forgetting factor", () => {
  const fit = new OnlineLinear({ prior: [5], forgetting: 1, priorVariance: 10 });
  fit.observe([1], Number.NaN);
  assert.equal(fit.observations, 0);
  assert.equal(fit.predict([1]), 5);
  assert.throws(() => new OnlineLinear({ prior: [1], forgetting: 0, priorVariance: 1 }), /forgetting/);
  assert.throws(() => new OnlineLinear({ prior: [], forgetting: 1, priorVariance: 1 }), /feature/);
});
