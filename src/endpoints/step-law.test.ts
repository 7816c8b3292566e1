import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { StepLaw, scheduleSteps } from "./step-law.js";

// An H100 running Llama-3.1-8B, as the simulator's profile has it: 5.75 ms a step, 17.25 ms per 1,000
// prompt tokens, 0.6 ms per 100 decode tokens.
const H100 = [5.75, 17.25, 0.6] as const;

describe("scheduleSteps", () => {
  it("an idle engine waits for the request, then prefills it in one step", () => {
    const s = scheduleSteps(0, 2000, 0, 10, 8192, H100);
    assert.deepEqual(s, { waitMs: 10, steps: 1, prefillK: 2, decodeH: 0 });
    assert.equal(StepLaw.estimateMs(s, H100), 10 + 5.75 + 2 * 17.25);
  });

  it("a short prompt behind 6,000 queued tokens is done in their step; behind 9,000, a step later", () => {
    const same = scheduleSteps(6000, 500, 0, 0, 8192, H100);
    assert.equal(same.steps, 1);
    assert.equal(same.prefillK, 6.5);
    const next = scheduleSteps(9000, 500, 0, 0, 8192, H100);
    assert.equal(next.steps, 2);
    assert.equal(next.prefillK, 9.5);
  });

  it("decoding sequences take the step's budget and cost every step", () => {
    // 4,096 decoding: each step has 4,096 tokens left for prompts.
    const s = scheduleSteps(0, 10_000, 4096, 0, 8192, H100);
    assert.equal(s.steps, 3);
    assert.equal(s.decodeH, (3 * 4096) / 100);
  });

  it("while the request is in the API server, decode steps run and the queue drains", () => {
    // 30 ms in the API server; decodes keep the engine stepping, the 8,192 queued fill the first step.
    const s = scheduleSteps(8192, 100, 10, 30, 8192, H100);
    assert.equal(s.waitMs, 0);
    assert.ok(s.steps >= 2, `${s.steps} steps`);
    assert.ok(StepLaw.estimateMs(s, H100) >= 30);
  });

  it("with no prompt tokens queued, the request waits for the API server, then takes one step", () => {
    // Decode steps run meanwhile; it joins the first after it arrives (not walked step by step).
    const s = scheduleSteps(0, 100, 50, 30, 8192, H100);
    assert.deepEqual(s, { waitMs: 30, steps: 1, prefillK: 0.1, decodeH: 0.5 });
  });

  it("a queue past the walk is counted in full steps", () => {
    const s = scheduleSteps(8192 * 5000, 1, 0, 0, 8192, H100);
    assert.equal(s.steps, 5001);
  });
});

describe("StepLaw", () => {
  /** TTFTs from the true law `w` on varied loads, with up to a step's phase of noise. */
  function teach(law: StepLaw, w: readonly number[], n: number, seed = 1): void {
    let x = seed;
    const rnd = () => {
      x = (x * 16807) % 2147483647;
      return x / 2147483647;
    };
    for (let i = 0; i < n; i++) {
      const s = scheduleSteps(rnd() * 20_000, 100 + rnd() * 6000, Math.floor(rnd() * 200), 10, 8192, w);
      law.observe(s, StepLaw.estimateMs(s, w) * (0.9 + 0.2 * rnd()));
    }
  }

  it("learns the engine's law from first tokens", () => {
    const law = new StepLaw([10, 100, 0.6]);
    assert.equal(law.learned, false);
    teach(law, H100, 300);
    assert.ok(law.learned);
    const s = scheduleSteps(12_000, 3000, 50, 10, 8192, H100);
    const err = StepLaw.estimateMs(s, law.weights) / StepLaw.estimateMs(s, H100) - 1;
    assert.ok(Math.abs(err) < 0.1, `estimate off by ${(err * 100).toFixed(1)}%`);
  });

  it("follows an engine that turns four times slower within tens of first tokens", () => {
    const law = new StepLaw([10, 100, 0.6]);
    teach(law, H100, 300);
    const slow = H100.map((b) => b * 4);
    teach(law, slow, 40, 7);
    const s = scheduleSteps(4000, 2000, 20, 10, 8192, slow);
    const err = StepLaw.estimateMs(s, law.weights) / StepLaw.estimateMs(s, slow) - 1;
    assert.ok(Math.abs(err) < 0.2, `estimate off by ${(err * 100).toFixed(1)}% after the slowdown`);
  });

  it("never estimates less than the wait and a millisecond, whatever the fit's coefficients", () => {
    const odd = [-8, 17, 0.3];
    const s = scheduleSteps(80_000, 100, 400, 25, 8192, odd);
    assert.ok(s.steps >= 10);
    assert.equal(StepLaw.estimateMs(s, [-1000, 0, 0]), s.waitMs + 1);
    assert.ok(StepLaw.estimateMs(s, odd) > s.waitMs);
  });

  it("learns the per-step and decode costs from streams' decodes, which first tokens alone hardly tell", () => {
    // First tokens on an idle engine: one step each, nearly all prompt. Steps and prompt tokens are
    // what they vary in; the decode term and the step's own cost are hardly apart.
    const w = [5.75, 17.25, 0.6];
    let x = 3;
    const rnd = () => {
      x = (x * 16807) % 2147483647;
      return x / 2147483647;
    };
    const teachFirst = (law: StepLaw) => {
      const s = scheduleSteps(0, 200 + rnd() * 4000, Math.floor(rnd() * 8), 10, 8192, w);
      law.observe(s, StepLaw.estimateMs(s, w) * (0.85 + 0.3 * rnd()));
    };
    const law = new StepLaw([10, 100, 0.6]);
    const both = new StepLaw([10, 100, 0.6]);
    for (let i = 0; i < 200; i++) {
      teachFirst(law);
      teachFirst(both);
      // A stream's decode: 50–500 steps beside 10–250 sequences, a few prompts computed meanwhile.
      const steps = 50 + Math.floor(rnd() * 450);
      const decodeH = (steps * (10 + rnd() * 240)) / 100;
      const prefillK = rnd() * 20;
      const ms = steps * w[0]! + prefillK * w[1]! + decodeH * w[2]!;
      both.observeSteps(steps, prefillK, decodeH, ms * (0.95 + 0.1 * rnd()));
    }
    // A decode-only step beside 200 sequences: 5.75 + 1.2 ms.
    const step = (v: ArrayLike<number>) => v[0]! + 2 * v[2]!;
    const err = (v: ArrayLike<number>) => Math.abs(step(v) / step(w) - 1);
    assert.ok(err(both.weights) < 0.05, `with decodes: ${Array.from(both.weights)}`);
    assert.ok(err(both.weights) < err(law.weights), `first tokens alone: ${Array.from(law.weights)}`);
    // And the prompt's cost stays what first tokens taught.
    assert.ok(Math.abs(both.weights[1]! / w[1]! - 1) < 0.1, `per 1,000 prompt tokens ${both.weights[1]}`);
  });

  it("ignores a decode of no steps or no time", () => {
    const law = new StepLaw([10, 100, 0.6]);
    const before = Array.from(law.weights);
    law.observeSteps(0, 1, 1, 100);
    law.observeSteps(10, 1, 1, 0);
    law.observeSteps(10, 1, 1, Number.NaN);
    assert.deepEqual(Array.from(law.weights), before);
  });

  it("ignores a first token with no time", () => {
    const law = new StepLaw([10, 100, 0.6]);
    const before = Array.from(law.weights);
    law.observe(scheduleSteps(0, 100, 0, 0, 8192, H100), 0);
    law.observe(scheduleSteps(0, 100, 0, 0, 8192, H100), Number.NaN);
    assert.deepEqual(Array.from(law.weights), before);
  });
});
