// Generated prose for prompts of a given length: English text, or a Chinese customer-support transcript
// (the main workload of seed 004), deterministic per seed.

import { seededRandom } from "./rng.js";
import { CHINESE_SPEAKERS, CHINESE_WORDS, ENGLISH_WORDS } from "./sample-words.js";
import { countTokens } from "./tokenizer.js";

/**
 * Realistic-looking text of about `approxTokens` tokens, deterministic per seed: English prose, or a
 * Chinese customer-support transcript. countTokens() of the result is within ±3% of the target for
 * targets of 100 tokens and up (in practice within a few tokens). Benchmarks build prompts with it.
 * @example sampleText("zh", 2_800, 7) // "用户：您好，请问我的订单…"
 */
export function sampleText(lang: "en" | "zh", approxTokens: number, seed: number): string {
  const random = seededRandom(seed);
  return lang === "en" ? sampleEnglish(approxTokens, random) : sampleChinese(approxTokens, random);
}

interface EnglishVocabulary {
  spaced: string[];
  spacedTokens: number[];
  capital: string[];
  capitalTokens: number[];
  spacedCapital: string[];
  spacedCapitalTokens: number[];
}

let englishVocabulary: EnglishVocabulary | null = null;

function getEnglishVocabulary(): EnglishVocabulary {
  if (englishVocabulary === null) {
    const capital = ENGLISH_WORDS.map((w) => w.charAt(0).toUpperCase() + w.slice(1));
    const spaced = ENGLISH_WORDS.map((w) => " " + w);
    const spacedCapital = capital.map((w) => " " + w);
    englishVocabulary = {
      spaced,
      spacedTokens: spaced.map(countTokens),
      capital,
      capitalTokens: capital.map(countTokens),
      spacedCapital,
      spacedCapitalTokens: spacedCapital.map(countTokens),
    };
  }
  return englishVocabulary;
}

/** Uniform draw → word index, skewed towards the front of the list, where the frequent words are. */
const SKEWED_INDEX_STEPS = 4096;

// Every piece appended below starts or ends at a prefix-stable cut (before a space or a punctuation
// mark, after a punctuation mark or a newline run), so per-piece token counts add up exactly.
// Strings are appended with += (V8 ropes): measured 2x faster than collecting parts and join().
function sampleEnglish(target: number, random: () => number): string {
  const v = getEnglishVocabulary();
  const skewed = getSkewedIndex(v.spaced.length);
  let out = "";
  let tokens = 0;
  let wordsLeft = 0;
  let sentencesLeft = 3 + Math.floor(random() * 4);
  let lastWasComma = false;
  while (tokens < target - 1) {
    const w = skewed[Math.floor(random() * SKEWED_INDEX_STEPS)]!;
    if (wordsLeft === 0) {
      if (out.length === 0) {
        out += v.capital[w]!;
        tokens += v.capitalTokens[w]!;
      } else if (sentencesLeft === 0) {
        out += "\n\n" + v.capital[w]!;
        tokens += 1 + v.capitalTokens[w]!;
        sentencesLeft = 3 + Math.floor(random() * 4);
      } else {
        out += v.spacedCapital[w]!;
        tokens += v.spacedCapitalTokens[w]!;
      }
      wordsLeft = 6 + Math.floor(random() * 14);
    } else {
      out += v.spaced[w]!;
      tokens += v.spacedTokens[w]!;
    }
    lastWasComma = false;
    wordsLeft--;
    const r = random();
    if (wordsLeft === 0) {
      out += r < 0.06 ? "?" : ".";
      tokens++;
      sentencesLeft--;
    } else if (r < 0.07) {
      out += ",";
      tokens++;
      lastWasComma = true;
    }
  }
  if (lastWasComma) return out.slice(0, -1) + ".";
  return wordsLeft > 0 ? out + "." : out;
}

let skewedIndex: Uint16Array | null = null;

function getSkewedIndex(words: number): Uint16Array {
  if (skewedIndex === null) {
    skewedIndex = new Uint16Array(SKEWED_INDEX_STEPS);
    for (let i = 0; i < SKEWED_INDEX_STEPS; i++) {
      skewedIndex[i] = Math.floor(((i + 0.5) / SKEWED_INDEX_STEPS) ** 1.6 * words);
    }
  }
  return skewedIndex;
}

function sampleChinese(target: number, random: () => number): string {
  const pick = () => CHINESE_WORDS[Math.floor(random() * CHINESE_WORDS.length)]!;
  const out: string[] = [];
  let tokens = 0;
  let speaker = 0;
  let sentencesLeft = 0;
  const parts: string[] = [];
  while (tokens < target) {
    // One sentence, with the line break and speaker label that may precede it, is counted as a unit:
    // it ends with CJK punctuation, a prefix-stable cut, so the unit counts add up exactly.
    parts.length = 0;
    if (sentencesLeft === 0) {
      if (out.length > 0) parts.push("\n");
      parts.push(CHINESE_SPEAKERS[speaker]!);
      speaker = 1 - speaker;
      sentencesLeft = 1 + Math.floor(random() * 3);
    }
    const clauses = 1 + Math.floor(random() * 3);
    for (let c = 0; c < clauses; c++) {
      if (c > 0) parts.push("，");
      const words = 2 + Math.floor(random() * 5);
      for (let w = 0; w < words; w++) parts.push(pick());
    }
    const end = speaker === 1 && random() < 0.3 ? "？" : random() < 0.05 ? "！" : "。";
    sentencesLeft--;
    const sentence = parts.join("") + end;
    const count = countTokens(sentence);
    if (tokens + count <= target) {
      out.push(sentence);
      tokens += count;
      continue;
    }
    // The last sentence overshoots: keep the word prefix that lands closest to the target.
    let best = "";
    let bestTokens = 0;
    let prefix = "";
    for (const part of parts) {
      prefix += part;
      const candidate = prefix + end;
      const n = countTokens(candidate);
      if (Math.abs(tokens + n - target) < Math.abs(tokens + bestTokens - target)) {
        best = candidate;
        bestTokens = n;
      }
      if (tokens + n >= target) break;
    }
    out.push(best);
    break;
  }
  return out.join("");
}
