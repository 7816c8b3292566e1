import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { decodeSteps, EngineTotals, NO_PROGRESS } from "./engine-progress.js";

describe("EngineTotals", () => {
  it("integrates the sequences decoding over time, and a time already passed adds nothing", () => {
    const t = new EngineTotals();
    t.advance(0, 100);
    t.advance(2, 150); // two decoding 100 → 150
    t.advance(3, 140); // late: nothing
    t.advance(3, 250); // three decoding 150 → 250
    t.leftPrefill(800);
    t.adapterLoad();
    assert.deepEqual(t.snapshot(), { decodeSeqMs: 2 * 50 + 3 * 100, prefillTokens: 800, adapterLoads: 1 });
  });
});

describe("decodeSteps", () => {
  const at = (decodeSeqMs: number, prefillTokens: number, adapterLoads = 0) => ({
    decodeSeqMs,
    prefillTokens,
    adapterLoads,
  });

  it("a decode of 101 tokens over 500 ms beside 4 sequences on average, 3,000 prompt tokens meanwhile", () => {
    assert.deepEqual(decodeSteps(at(1000, 5000), at(3000, 8000), 101, 500), {
      steps: 100,
      prefillK: 3,
      decodeH: 4,
      ms: 500,
    });
  });

  it("tells nothing of one token, no time, or an adapter loaded meanwhile", () => {
    assert.equal(decodeSteps(NO_PROGRESS, at(100, 0), 1, 100), null);
    assert.equal(decodeSteps(NO_PROGRESS, at(100, 0), 10, 0), null);
    assert.equal(decodeSteps(NO_PROGRESS, at(100, 0, 1), 10, 100), null);
  });
});
