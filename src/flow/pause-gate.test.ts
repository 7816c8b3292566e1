import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { PauseWhen } from "../config/route-types.js";
import { LatencyWindow } from "./latency-window.js";
import { PauseGate } from "./pause-gate.js";

const WHEN: PauseWhen = {
  pool: "summary-online",
  ttftP95MsGt: 2000,
  windowSeconds: 10,
  resumeBelowMs: 1600,
  resumeAfterSeconds: 5,
  minSamples: 20,
  retryAfterSeconds: 900,
};

/** `n` samples of `ms` spread over the second before `t`. */
function fill(w: LatencyWindow, n: number, ms: number, t: number): void {
  for (let i = 0; i < n; i++) w.add(ms, t - 1000 + (i * 1000) / n);
}

describe("LatencyWindow", () => {
  it("gives the nearest-rank quantile of the samples inside the window only", () => {
    const w = new LatencyWindow(1000, 16);
    for (let i = 1; i <= 10; i++) w.add(i * 100, 5000 + i);
    assert.deepEqual(w.quantile(0.95, 5500), { value: 1000, count: 10 });
    assert.deepEqual(w.quantile(0.5, 5500), { value: 500, count: 10 });
    assert.deepEqual(w.quantile(0.95, 7000), { value: null, count: 0 }, "all aged out");
  });

  it("keeps only the newest samples past its capacity", () => {
    const w = new LatencyWindow(60_000, 4);
    for (let i = 0; i < 10; i++) w.add(i, 1000 + i);
    assert.equal(w.quantile(0.5, 1100).count, 4);
    assert.equal(w.quantile(0, 1100).value, 6);
  });
});

describe("PauseGate", () => {
  it("pauses when the watched P95 passes the threshold, not before, and not on too few samples", () => {
    const w = new LatencyWindow(10_000);
    const g = new PauseGate("quality-batch", "summary-batch", WHEN, w);
    fill(w, 10, 5000, 1000);
    assert.equal(g.evaluate(1000), null, "10 samples < minSamples");
    fill(w, 190, 300, 2000);
    assert.equal(g.evaluate(2000), null, "5% slow is still a P95 of 300 ms");
    fill(w, 40, 3000, 3000);
    const t = g.evaluate(3000);
    assert.ok(t?.paused);
    assert.equal(t.ttftP95Ms, 3000);
    assert.equal(t.samples, 240);
    assert.equal(g.paused, true);
  });

  it("resumes only after the P95 stays under the lower mark for resumeAfterSeconds (hysteresis)", () => {
    const w = new LatencyWindow(10_000);
    const g = new PauseGate("quality-batch", "summary-batch", WHEN, w);
    fill(w, 50, 2500, 1000);
    assert.ok(g.evaluate(1000)?.paused);
    // Slow samples age out 10 s later; 1,800 ms is under the threshold but above the resume mark.
    fill(w, 50, 1800, 12_000);
    assert.equal(g.evaluate(12_000), null);
    assert.equal(g.paused, true, "1,800 ms is not calm enough");
    fill(w, 60, 400, 23_000);
    assert.equal(g.evaluate(23_000), null, "calm starts now");
    assert.equal(g.evaluate(26_000), null, "3 s of calm < 5 s");
    fill(w, 20, 2100, 27_000);
    assert.equal(g.evaluate(27_000), null, "a relapse restarts the calm period");
    fill(w, 200, 300, 38_000);
    assert.equal(g.evaluate(38_000), null);
    const t = g.evaluate(43_000);
    assert.equal(t?.paused, false);
    assert.equal(t?.conditionSince, 38_000);
    assert.equal(g.paused, false);
  });

  it("resumes when the watched pool goes quiet (no samples left) for the hold time", () => {
    const w = new LatencyWindow(10_000);
    const g = new PauseGate("quality-batch", "summary-batch", WHEN, w);
    fill(w, 30, 4000, 1000);
    assert.ok(g.evaluate(1000)?.paused);
    assert.equal(g.evaluate(11_500), null);
    assert.equal(g.evaluate(16_500)?.paused, false);
    assert.equal(g.retryAfterSeconds(), 900);
  });
});
