import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { spillShare, spillStep } from "./spillover.js";

const S = { minHeadroom: 0.15, maxShare: 0.5 };

describe("spillover", () => {
  it("spills a share growing with the shortfall, capped at maxShare, and none at or above minHeadroom", () => {
    assert.equal(spillShare(0.15, S), 0);
    assert.equal(spillShare(0.9, S), 0);
    assert.ok(Math.abs(spillShare(0.09, S) - 0.4) < 1e-12);
    assert.equal(spillShare(0, S), 0.5);
    assert.equal(spillShare(0.05, { minHeadroom: 0, maxShare: 1 }), 0);
  });

  it("counts the share out evenly: floor(n × share) of n requests", () => {
    for (const share of [0.1, 0.25, 1 / 3, 0.4, 0.5, 0.07]) {
      let acc = 0;
      let spilled = 0;
      let lastGap = -1;
      let last = -1;
      for (let i = 0; i < 1_000; i++) {
        const step = spillStep(acc, share);
        acc = step.acc;
        if (!step.spill) continue;
        spilled++;
        if (last >= 0) lastGap = Math.max(lastGap, i - last);
        last = i;
      }
      assert.ok(Math.abs(spilled - 1_000 * share) <= 1, `${share}: ${spilled}`);
      assert.ok(lastGap <= Math.ceil(1 / share), `${share}: gap ${lastGap}`);
    }
  });

  it("forgets a past shortage once the share is 0", () => {
    assert.deepEqual(spillStep(0.9, 0), { spill: false, acc: 0 });
  });
});
