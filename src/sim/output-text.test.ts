// Pins OutputText: every generated piece is exactly one token of the simulated tokenizer, in order,
// and the text is deterministic per seed.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { OutputText } from "./output-text.js";
import { tokenPieces } from "./tokenizer.js";

function pieces(seed: number, lang: "en" | "zh", n: number): string[] {
  const out = new OutputText(seed, lang);
  return Array.from({ length: n }, (_, i) => out.piece(i));
}

describe("OutputText", () => {
  for (const lang of ["en", "zh"] as const) {
    it(`generates pieces that tokenize back to exactly themselves, one token each (${lang})`, () => {
      for (const seed of [0, 1, 2, 12345, 0xffffffff]) {
        const generated = pieces(seed, lang, 3000);
        assert.deepEqual(tokenPieces(generated.join("")), generated);
      }
    });

    it(`is deterministic per seed and differs across seeds (${lang})`, () => {
      assert.deepEqual(pieces(7, lang, 200), pieces(7, lang, 200));
      assert.notDeepEqual(pieces(7, lang, 200), pieces(8, lang, 200));
      const out = new OutputText(7, lang);
      assert.equal(out.piece(150), pieces(7, lang, 200)[150], "piece(i) does not depend on call order");
    });
  }

  it("writes English as sentences: capitalized start, short spaced words, single full stops", () => {
    const generated = pieces(3, "en", 2000);
    assert.match(generated[0]!, /^[A-Z][a-z]{0,5}$/);
    for (let i = 1; i < generated.length; i++) {
      const p = generated[i]!;
      const prev = generated[i - 1]!;
      if (p === ".") {
        assert.notEqual(prev, ".");
        continue;
      }
      assert.match(p, prev === "." ? /^ [A-Z][a-z]{0,5}$/ : /^ [a-z]{1,6}$/);
    }
    const stops = generated.filter((p) => p === ".").length;
    assert.ok(stops > 50 && stops < 400, `${stops} full stops`);
  });

  it("writes Chinese as single characters with occasional ，。 and never two punctuation marks in a row", () => {
    const generated = pieces(3, "zh", 2000);
    for (let i = 0; i < generated.length; i++) {
      const p = generated[i]!;
      assert.equal(p.length, 1);
      if (p === "，" || p === "。") assert.ok(i > 0 && !/[，。]/.test(generated[i - 1]!));
      else assert.match(p, /\p{Script=Han}/u);
    }
    assert.ok(new Set(generated).size > 40, "a varied character set");
  });
});
