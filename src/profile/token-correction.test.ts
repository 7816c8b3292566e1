import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { TokenCorrection } from "./token-correction.js";

describe("TokenCorrection", () => {
  it("starts at factor 1 and learns a model's ratio of actual to estimated tokens", () => {
    const c = new TokenCorrection();
    assert.equal(c.factor("m"), 1);
    assert.equal(c.apply("m", 1000), 1000);
    assert.equal(c.p90RelativeError("m"), null);
    for (let i = 0; i < 200; i++) c.observe("m", 1000, 1200 + ((i * 37) % 41) - 20);
    assert.ok(Math.abs(c.factor("m") - 1.2) < 0.02, `factor ${c.factor("m")}`);
    assert.ok(Math.abs(c.apply("m", 5000) - 6000) < 100);
    assert.equal(c.factor("other"), 1, "models learn separately");
  });

  it("ignores tiny prompts and nonsense pairs", () => {
    const c = new TokenCorrection({ minTokens: 64 });
    assert.equal(c.observe("m", 20, 60), false);
    assert.equal(c.observe("m", 100, 0), false);
    assert.equal(c.observe("m", Number.NaN, 100), false);
    assert.equal(c.factor("m"), 1);
    assert.deepEqual(c.stats(), []);
  });

  it("clamps the factor to [0.5, 2]", () => {
    const c = new TokenCorrection();
    for (let i = 0; i < 50; i++) c.observe("m", 100, 1000);
    assert.equal(c.factor("m"), 2);
    for (let i = 0; i < 500; i++) c.observe("m", 1000, 100);
    assert.equal(c.factor("m"), 0.5);
  });

  it("follows a change of tokenizer (a new model version) within a few dozen requests", () => {
    const c = new TokenCorrection();
    for (let i = 0; i < 100; i++) c.observe("m", 1000, 1000);
    for (let i = 0; i < 60; i++) c.observe("m", 1000, 1300);
    assert.ok(c.factor("m") > 1.25, `factor ${c.factor("m")}`);
  });

  it("reports the P90 relative error of corrected and raw estimates per model", () => {
    const c = new TokenCorrection({ window: 100 });
    for (let i = 0; i < 300; i++) c.observe("m", 1000, 1500);
    const [s] = c.stats();
    assert.equal(s?.model, "m");
    assert.equal(s?.samples, 300);
    assert.ok((s?.p90RelativeError ?? 1) < 0.001, "the window holds only converged samples");
    assert.ok(Math.abs((s?.p90RawRelativeError ?? 0) - 1 / 3) < 1e-9);
    assert.equal(c.p90RelativeError("m"), s?.p90RelativeError);
  });
});
