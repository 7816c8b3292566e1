import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { LoopDelayMonitor } from "./loop-delay.js";

function block(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // keep the loop busy
  }
}

describe("LoopDelayMonitor", () => {
  it("reports nothing before a window closes, then the window's delays, and a stall past the bound", async () => {
    const stalls: number[] = [];
    const m = new LoopDelayMonitor(60_000, 5, (w) => stalls.push(w.maxMs!), 50);
    assert.ok(Object.values(m.last).every((v) => v === null));
    m.start();
    await new Promise((r) => setTimeout(r, 30));
    block(120);
    await new Promise((r) => setTimeout(r, 30));
    const w = m.close();
    m.stop();
    assert.ok(w.maxMs !== null && w.maxMs >= 100, `max ${w.maxMs} ms after blocking 120 ms`);
    assert.ok(w.p50Ms !== null && w.p50Ms < w.maxMs);
    assert.ok(w.minMs !== null && w.minMs <= w.p50Ms && w.p50Ms <= w.p90Ms! && w.p90Ms! <= w.p99Ms!);
    assert.ok(w.meanMs !== null && w.meanMs > 0 && w.meanMs < w.maxMs && w.stddevMs! > 0);
    assert.equal(stalls.length, 1);
  });
});
