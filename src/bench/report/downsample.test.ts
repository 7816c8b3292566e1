import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { cdfPoints, minMaxDownsample, type Point } from "./downsample.js";

describe("cdfPoints", () => {
  it("gives every sample its share when there are few", () => {
    assert.deepEqual(cdfPoints([30, 10, 20, Number.NaN], 10), [
      [10, 1 / 3],
      [20, 2 / 3],
      [30, 1],
    ]);
  });

  it("keeps at most maxPoints, always the fastest and the slowest", () => {
    const values = Array.from({ length: 10_000 }, (_, i) => i + 1);
    const points = cdfPoints(values, 300);
    assert.equal(points.length, 300);
    assert.deepEqual(points[0], [1, 1 / 10_000]);
    assert.deepEqual(points.at(-1), [10_000, 1]);
  });
});

describe("minMaxDownsample", () => {
  it("keeps a one-sample spike that averaging would flatten", () => {
    const points: Point[] = Array.from({ length: 5000 }, (_, i) => [i, i === 2345 ? 40 : 1]);
    const out = minMaxDownsample(points, 600);
    assert.ok(out.length <= 600);
    assert.ok(out.some(([x, y]) => x === 2345 && y === 40));
    assert.deepEqual(
      out.map(([x]) => x),
      [...out.map(([x]) => x)].sort((a, b) => a - b),
      "still in time order",
    );
  });

  it("leaves a short series alone", () => {
    assert.deepEqual(
      minMaxDownsample(
        [
          [0, 1],
          [1, 2],
        ],
        600,
      ),
      [
        [0, 1],
        [1, 2],
      ],
    );
  });
});
