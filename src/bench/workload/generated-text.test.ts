import assert from "node:assert/strict";
import { test } from "node:test";
import { countTokens } from "../../sim/tokenizer.js";
import { generatedText } from "./generated-text.js";

test("texts hit their token count, short and long, in both languages", () => {
  for (const lang of ["en", "zh"] as const) {
    for (const tokens of [120, 2800, 4097, 16_000, 52_000]) {
      const n = countTokens(generatedText(lang, tokens, tokens * 31 + 7));
      assert.ok(Math.abs(n - tokens) <= Math.max(3, tokens * 0.01), `${lang} ${tokens}: got ${n}`);
    }
  }
});

test("the same seed gives the same text; long texts of different seeds share no prefix", () => {
  assert.equal(generatedText("zh", 52_000, 1), generatedText("zh", 52_000, 1));
  const a = generatedText("zh", 52_000, 1);
  const b = generatedText("zh", 52_000, 2);
  let same = 0;
  while (a[same] === b[same]) same++;
  // "用户：" opens every transcript; nothing beyond it (less than one 16-token KV block) is shared.
  assert.ok(same < 16, `${same} shared leading characters`);
});

test("zero tokens is the empty text", () => {
  assert.equal(generatedText("en", 0, 1), "");
});
