// Deterministic generated text for the simulated engine: the i-th output token's text, chosen so that
// the pieces, concatenated in order, tokenize back to exactly those pieces, one token each.

import { CHINESE_WORDS, ENGLISH_WORDS } from "./sample-words.js";
import { isStandaloneCjk } from "./tokenizer.js";

/** Short enough that the tokenizer never splits them (it keeps every word of up to 6 letters whole). */
const MAX_OUTPUT_WORD_LETTERS = 6;

interface Alphabet {
  /** Pieces that may follow any other piece (" word" or a CJK character). */
  plain: readonly string[];
  /** Pieces used first and after a full stop ("Word", " Word"); same as plain for Chinese. */
  first: readonly string[];
  afterStop: readonly string[];
  /** Punctuation pieces, never two in a row. */
  stops: readonly string[];
  /** One piece in `stopEvery` (on average) is punctuation. */
  stopEvery: number;
}

let english: Alphabet | null = null;
let chinese: Alphabet | null = null;

function englishAlphabet(): Alphabet {
  if (english === null) {
    const words = [...new Set(ENGLISH_WORDS)].filter((w) => w.length <= MAX_OUTPUT_WORD_LETTERS);
    const capital = words.map((w) => w.charAt(0).toUpperCase() + w.slice(1));
    english = {
      plain: words.map((w) => " " + w),
      first: capital,
      afterStop: capital.map((w) => " " + w),
      stops: ["."],
      stopEvery: 12,
    };
  }
  return english;
}

// Only characters that never merge with the next one, so no two generated characters become one token.
function chineseAlphabet(): Alphabet {
  if (chinese === null) {
    const chars = new Set<string>();
    for (const w of CHINESE_WORDS) {
      for (const ch of w) if (isStandaloneCjk(ch.charCodeAt(0))) chars.add(ch);
    }
    const plain = [...chars];
    chinese = { plain, first: plain, afterStop: plain, stops: ["，", "。"], stopEvery: 10 };
  }
  return chinese;
}

/**
 * The text an engine stream generates, one token at a time, from a seed.
 * piece(i) is O(1) and allocation-free, so it can be called for every generated token.
 * @example new OutputText(1, "en").piece(0) // "Report"
 */
export class OutputText {
  private readonly seed: number;
  private readonly alphabet: Alphabet;

  constructor(seed: number, lang: "en" | "zh") {
    this.seed = seed >>> 0;
    this.alphabet = lang === "en" ? englishAlphabet() : chineseAlphabet();
  }

  /** The text of the i-th generated token (i ≥ 0). */
  piece(i: number): string {
    const a = this.alphabet;
    const h = this.hash(i);
    if (i === 0) return a.first[h % a.first.length]!;
    if (this.isStop(i, h)) return a.stops[(h >>> 8) % a.stops.length]!;
    const list = this.isStop(i - 1, this.hash(i - 1)) ? a.afterStop : a.plain;
    return list[(h >>> 4) % list.length]!;
  }

  // A stop needs a non-stop before it; that is decided by the previous hash alone, not by
  // isStop(i - 1), so no recursion and never two stops in a row.
  private isStop(i: number, h: number): boolean {
    const every = this.alphabet.stopEvery;
    return i >= 2 && h % every === 0 && this.hash(i - 1) % every !== 0;
  }

  private hash(i: number): number {
    let h = Math.imul(this.seed ^ Math.imul(i + 1, 0x9e3779b1), 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    return (h ^ (h >>> 16)) >>> 0;
  }
}
