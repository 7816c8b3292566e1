import assert from "node:assert/strict";
import { test } from "node:test";
import {
  arrivalsWithCount,
  lognormalInt,
  poissonArrivals,
  randomStream,
  uniformInt,
  zipf,
} from "./distributions.js";

test("a purpose's stream does not depend on other purposes, and differs by seed", () => {
  const a = randomStream(1, "sizes");
  const b = randomStream(1, "sizes");
  randomStream(1, "arrivals")();
  assert.equal(a(), b());
  assert.notEqual(randomStream(1, "sizes")(), randomStream(2, "sizes")());
});

test("Poisson arrivals are ascending, inside the window, and near the rate", () => {
  const t = poissonArrivals(20, 1000, 101_000, randomStream(3, "p"));
  assert.ok(t.every((x, i) => x >= 1000 && x < 101_000 && (i === 0 || x >= t[i - 1]!)));
  assert.ok(Math.abs(t.length - 2000) < 150, `${t.length} arrivals for an expected 2000`);
  assert.deepEqual(poissonArrivals(0, 0, 1000, randomStream(3, "p")), []);
});

test("arrivals with a count have exactly that count, sorted, inside the window", () => {
  const t = arrivalsWithCount(7, 500, 900, randomStream(4, "c"));
  assert.equal(t.length, 7);
  assert.ok(t.every((x, i) => x >= 500 && x < 900 && (i === 0 || x >= t[i - 1]!)));
});

test("lognormal draws stay in bounds and centre on the median", () => {
  const r = randomStream(5, "l");
  const v = Array.from({ length: 4001 }, () =>
    lognormalInt(r, { median: 600, sigma: 1, min: 16, max: 16_000 }),
  ).sort((a, b) => a - b);
  assert.ok(v[0]! >= 16 && v[v.length - 1]! <= 16_000);
  assert.ok(Math.abs(v[2000]! - 600) < 60, `median ${v[2000]}`);
  assert.ok(v[v.length - 1]! > 5000, "the tail is heavy");
});

test("uniform integers cover both ends", () => {
  const r = randomStream(6, "u");
  const v = new Set(Array.from({ length: 500 }, () => uniformInt(r, 3, 6)));
  assert.deepEqual([...v].sort(), [3, 4, 5, 6]);
});

test("Zipf draws follow 1/(k+1)^s: item 0 most popular, each share within tolerance", () => {
  const z = zipf(8, 1);
  // H_8 = 2.718: item 0 36.8%, item 7 4.6%.
  assert.ok(Math.abs(z.probabilities[0]! - 1 / 2.717857) < 1e-6);
  assert.ok(Math.abs(z.probabilities.reduce((a, p) => a + p, 0) - 1) < 1e-12);
  const r = randomStream(6, "z");
  const draws = 20_000;
  const counts = new Array<number>(8).fill(0);
  for (let i = 0; i < draws; i++) counts[z.draw(r)]!++;
  counts.forEach((c, k) => {
    const expected = z.probabilities[k]! * draws;
    // Five standard deviations of a binomial count.
    const sd = Math.sqrt(expected * (1 - z.probabilities[k]!));
    assert.ok(
      Math.abs(c - expected) < 5 * sd,
      `item ${k}: ${c} draws for an expected ${expected.toFixed(0)}`,
    );
    if (k > 0) assert.ok(counts[k - 1]! > c * 0.9, "popularity falls with rank");
  });
  assert.equal(zipf(1, 1).draw(r), 0);
  assert.throws(() => zipf(0, 1));
});
