import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { formatCount, formatMs, formatRate, mdCell } from "./format.js";

describe("report figures", () => {
  it("shows durations below 10 s in whole milliseconds", () => {
    assert.equal(formatMs(742.4), "742 ms");
    assert.equal(formatMs(0), "0 ms");
    assert.equal(formatMs(6400), "6400 ms");
    assert.equal(formatMs(9999.4), "9999 ms");
  });

  it("shows durations from 10 s in seconds with one decimal", () => {
    assert.equal(formatMs(9999.6), "10.0 s", "what would round to 10000 ms is already seconds");
    assert.equal(formatMs(18_000), "18.0 s");
    assert.equal(formatMs(18_260), "18.3 s");
  });

  it("shows rates as percentages with one decimal", () => {
    assert.equal(formatRate(0.941), "94.1%");
    assert.equal(formatRate(0.0785), "7.9%");
    assert.equal(formatRate(1), "100.0%");
  });

  it("writes n/a for a missing figure", () => {
    for (const v of [null, undefined, Number.NaN]) {
      assert.equal(formatMs(v), "n/a");
      assert.equal(formatRate(v), "n/a");
    }
  });

  it("groups thousands in counts", () => {
    assert.equal(formatCount(756000), "756,000");
  });

  it("keeps a table cell one cell", () => {
    assert.equal(mdCell("a|b\nc"), "a\\|b c");
  });
});
