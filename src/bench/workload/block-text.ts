// Prompt text for traces that give prefix sharing as block ids (Mooncake's `hash_ids`): each id stands
// for one block of prompt tokens and its text is generated from the id alone, so requests with the same
// leading ids share exactly those blocks' text and nothing else; the engines' prefix caches and the
// gateway's prefix index then see the sharing the trace describes.
//
// Every token of a block text stands alone in the simulator's tokenizer: block texts concatenate
// without merging across the seam, and any cut between tokens keeps its count. English blocks are built
// from single-token words (" word", " Word", ",", "."), every one with its leading space, so a block
// opens with its own token whatever precedes it; Chinese blocks open with a character that never merges
// with the next, are cut from sampled clauses on the tokenizer's pieces and end on "。", which never
// merges with what follows either.

import { hashString, seededRandom } from "../../sim/rng.js";
import { CHINESE_WORDS, ENGLISH_WORDS } from "../../sim/sample-words.js";
import { isStandaloneCjk, tokenPieces } from "../../sim/tokenizer.js";
import type { TextLang } from "./generated-text.js";

/** Words the tokenizer always keeps whole, with or without a capital and a leading space. */
const SHORT_WORDS = ENGLISH_WORDS.filter((w) => /^[a-z]{1,6}$/.test(w));
const CAPITALS = SHORT_WORDS.map((w) => " " + w.charAt(0).toUpperCase() + w.slice(1));
const SPACED = SHORT_WORDS.map((w) => " " + w);
/** CJK characters that never merge with the next one: a Chinese block opens with one, from its id. */
const STANDALONE_CJK = [...new Set([...CHINESE_WORDS.join("")])].filter((c) =>
  isStandaloneCjk(c.charCodeAt(0)),
);

/** Enough for the blocks of many requests in flight; a long trace regenerates some. */
const MAX_CACHED_BLOCKS = 4096;
const blocks = new Map<string, string>();

function mod(id: number, n: number): number {
  return ((id % n) + n) % n;
}

/**
 * Text of exactly `tokens` tokens for block id `id`, the same for the same (lang, tokens, id). Its first
 * token follows from the id, so texts of ids closer than the opening words (387 English, 101 Chinese;
 * traces number new blocks consecutively) differ from the first token; further ids share one by chance
 * now and then. Cached.
 * @example blockText("en", 512, 46) // " Word more words… last."
 */
export function blockText(lang: TextLang, tokens: number, id: number): string {
  const key = `${lang}:${tokens}:${id}`;
  let text = blocks.get(key);
  if (text === undefined) {
    text = seededBlock(lang, tokens, hashString(`block:${id}`), id);
    if (blocks.size >= MAX_CACHED_BLOCKS) blocks.delete(blocks.keys().next().value as string);
    blocks.set(key, text);
  }
  return text;
}

/** The first `tokens` tokens of `text`: a prefix whose count is exactly `tokens` for block texts. */
export function leadingTokens(text: string, tokens: number): string {
  return tokenPieces(text).slice(0, Math.max(0, tokens)).join("");
}

/**
 * A prompt of `tokens` tokens from block ids: block k is blockText(hashIds[k]), cut to `tokens` (so
 * the last block may be partial). When the ids cover fewer tokens, the rest is the request's own text
 * from `ownSeed`, shared with nothing.
 * @example hashIdsText([46, 47], 512, 655, "en", hashString("user:r1")) // block 46, then 143 tokens of block 47
 */
export function hashIdsText(
  hashIds: readonly number[],
  blockTokens: number,
  tokens: number,
  lang: TextLang,
  ownSeed: number,
): string {
  let text = "";
  let left = Math.floor(tokens);
  for (const id of hashIds) {
    if (left <= 0) break;
    const block = blockText(lang, blockTokens, id);
    text += left >= blockTokens ? block : leadingTokens(block, left);
    left -= blockTokens;
  }
  if (left > 0) text += seededBlock(lang, left, ownSeed, ownSeed);
  return text;
}

function seededBlock(lang: TextLang, tokens: number, seed: number, first: number): string {
  if (tokens <= 0) return "";
  const random = seededRandom(seed);
  return lang === "en" ? englishBlock(tokens, random, first) : chineseBlock(tokens, random, first);
}

/** Sentences of single-token pieces: `tokens` pieces, the last a full stop (from two tokens up). */
function englishBlock(tokens: number, random: () => number, first: number): string {
  // Joined from an array: a flat string, where += would leave a rope of `tokens` cells for the GC.
  const out: string[] = [CAPITALS[mod(first, CAPITALS.length)]!];
  let wordsLeft = 5 + Math.floor(random() * 14);
  let comma = false;
  for (let n = 1; n < tokens; n++) {
    // Punctuation only where a word still fits before the closing full stop.
    const room = n < tokens - 2;
    if (n === tokens - 1) {
      out.push(".");
    } else if (wordsLeft === 0 && room) {
      out.push(random() < 0.06 ? "?" : ".");
      wordsLeft = -1;
    } else if (wordsLeft < 0) {
      out.push(CAPITALS[Math.floor(random() * CAPITALS.length)]!);
      wordsLeft = 5 + Math.floor(random() * 14);
    } else if (wordsLeft > 1 && room && !comma && random() < 0.07) {
      out.push(",");
      comma = true;
    } else {
      out.push(SPACED[Math.floor(random() * SPACED.length)]!);
      wordsLeft--;
      comma = false;
    }
  }
  return out.join("");
}

/**
 * A standalone character from the id (its own first token), then clauses of support-register words cut
 * to `tokens - 1` pieces, then "。".
 */
function chineseBlock(tokens: number, random: () => number, first: number): string {
  const head = STANDALONE_CJK[mod(first, STANDALONE_CJK.length)]!;
  if (tokens === 1) return head;
  const pick = () => CHINESE_WORDS[Math.floor(random() * CHINESE_WORDS.length)]!;
  let text = head;
  for (;;) {
    // About 1.3 characters a token: draw comfortably more, then cut on the tokenizer's pieces.
    while (text.length < tokens * 2 + 8) {
      const words = 3 + Math.floor(random() * 6);
      for (let w = 0; w < words; w++) text += pick();
      text += random() < 0.6 ? "，" : random() < 0.85 ? "。" : "？";
    }
    const pieces = tokenPieces(text);
    if (pieces.length >= tokens - 1) return pieces.slice(0, tokens - 1).join("") + "。";
    text += pick();
  }
}
