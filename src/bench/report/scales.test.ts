import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { latencyTickLabel, linearAxis, logAxis, niceCeil } from "./scales.js";

describe("axis scales", () => {
  it("labels a latency log axis at each decade from 10 ms", () => {
    const axis = logAxis("TTFT", 10, 200_000, latencyTickLabel);
    assert.deepEqual(
      axis.ticks.map((t) => t.label),
      ["10 ms", "100 ms", "1 s", "10 s", "100 s", "200 s"],
    );
    assert.equal(axis.toUnit(10), 0);
    assert.equal(axis.toUnit(200_000), 1);
    assert.ok(axis.minor.includes(2000) && !axis.minor.includes(1000));
    assert.deepEqual(
      logAxis("TTFT", 10, 1000, latencyTickLabel).ticks.map((t) => t.label),
      ["10 ms", "100 ms", "1 s"],
      "an axis ending on a decade gets no extra end label",
    );
  });

  it("ends an axis on a round figure at or above the data", () => {
    assert.equal(niceCeil(2300), 5000);
    assert.equal(niceCeil(1000), 1000);
    assert.equal(niceCeil(120_001), 200_000);
  });

  it("gives five to seven round linear ticks that cover the data", () => {
    const axis = linearAxis("s", 120, String);
    assert.deepEqual(
      axis.ticks.map((t) => t.value),
      [0, 20, 40, 60, 80, 100, 120],
    );
    const depth = linearAxis("depth", 3, String, 1);
    assert.ok(
      depth.ticks.every((t) => Number.isInteger(t.value)),
      "queue depth ticks are whole requests",
    );
    assert.ok(depth.toUnit(3) <= 1);
    assert.deepEqual(
      linearAxis("s", 1, String).ticks.map((t) => t.label),
      ["0", "0.2", "0.4", "0.6", "0.8", "1"],
      "no floating-point noise in labels",
    );
  });
});
