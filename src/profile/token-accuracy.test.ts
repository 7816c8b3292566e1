// Pins the estimator against the simulator's tokenizer and chat template (seed 004's rollout gate is a P90
// error under 18%; the target here is under 10% raw and under 5% once corrected).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { renderChatPrompt } from "../sim/chat-template.js";
import { sampleText } from "../sim/sample-text.js";
import { countTokens } from "../sim/tokenizer.js";
import { TokenCorrection } from "./token-correction.js";
import { estimateChatTokens } from "./token-estimate.js";

const SYSTEM = {
  en: "Summarize the conversation in three parts: the customer's problem, progress so far, next steps.",
  zh: "把客服对话整理为三段：用户问题、处理进展、下一步待办。",
} as const;

interface Sample {
  lang: "en" | "zh";
  estimated: number;
  actual: number;
}

/** Prompts of 200 to 60,000 tokens, spread evenly on a log scale, in both languages. */
function samples(count: number, seed: number): Sample[] {
  const out: Sample[] = [];
  for (let i = 0; i < count; i++) {
    const lang = i % 2 === 0 ? "en" : "zh";
    const target = Math.round(200 * 300 ** ((i * 0.618034) % 1));
    const messages = [
      { role: "system", content: SYSTEM[lang] },
      { role: "user", content: sampleText(lang, target, seed + i) },
    ];
    out.push({
      lang,
      estimated: estimateChatTokens(messages),
      actual: countTokens(renderChatPrompt(messages)),
    });
  }
  return out;
}

function p90(errors: number[]): number {
  const sorted = [...errors].sort((a, b) => a - b);
  return sorted[Math.ceil(0.9 * sorted.length) - 1]!;
}

const relative = (estimate: number, actual: number) => Math.abs(estimate - actual) / actual;

describe("token estimate accuracy against the simulator's tokenizer", () => {
  const set = samples(120, 1000);

  for (const lang of ["en", "zh"] as const) {
    it(`has a P90 relative error under 10% on ${lang} prompts without correction`, () => {
      const errors = set.filter((s) => s.lang === lang).map((s) => relative(s.estimated, s.actual));
      const value = p90(errors);
      // Measured: about 0.8% (en) and 1.7% (zh).
      assert.ok(value < 0.1, `P90 ${(value * 100).toFixed(2)}%`);
      assert.ok(value < 0.03, `P90 ${(value * 100).toFixed(2)}% drifted from the measured figure`);
    });
  }

  it("stays under 5% once corrected, on the simulator's own counts", () => {
    const c = new TokenCorrection();
    for (const s of samples(60, 5000)) c.observe("sim", s.estimated, s.actual);
    const value = p90(set.map((s) => relative(c.apply("sim", s.estimated), s.actual)));
    assert.ok(value < 0.05, `P90 ${(value * 100).toFixed(2)}%`);
  });

  it("learns a model whose tokenizer is 30% denser than the estimate assumes", () => {
    // Another vocabulary: the same texts cost 1.3x the simulator's tokens, with some per-prompt spread.
    const denser = (s: Sample, i: number) => Math.round(s.actual * (1.3 + ((i * 7) % 11) / 500));
    const train = samples(80, 9000);
    const raw = p90(set.map((s, i) => relative(s.estimated, denser(s, i))));
    assert.ok(raw > 0.2, `raw P90 ${(raw * 100).toFixed(2)}%`);
    const c = new TokenCorrection();
    for (const [i, s] of train.entries()) c.observe("dense", s.estimated, denser(s, i));
    const corrected = p90(set.map((s, i) => relative(c.apply("dense", s.estimated), denser(s, i))));
    assert.ok(corrected < 0.05, `corrected P90 ${(corrected * 100).toFixed(2)}%`);
    const own = c.stats()[0]!;
    assert.ok(own.p90RawRelativeError > 0.2 && own.p90RelativeError < own.p90RawRelativeError);
  });
});
