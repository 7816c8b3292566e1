import assert from "node:assert/strict";
import { test } from "node:test";
import {
  arrivalsWithCount,
  lognormalInt,
  poissonArrivals,
  randomStream,
  uniformInt,
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
