// Prompt text for benchmark requests: sampleText() of the simulator's tokenizer, with long texts built
// from a bank of cached chunks behind a unique head, so a 52,000-token prompt costs well under a millisecond.

import { hashString, seededRandom } from "../../sim/rng.js";
import { sampleText } from "../../sim/sample-text.js";

export type TextLang = "en" | "zh";

/** Texts up to this many tokens are sampled whole: about 1 ms for 2,800 Chinese tokens. */
const DIRECT_MAX_TOKENS = 4096;
/**
 * A long text opens with this many tokens sampled from its own seed. Engines hash prompt blocks as a
 * chain from the first token, so a unique head keeps two long texts from sharing any cached prefix even
 * though their bodies reuse the same chunks.
 */
const HEAD_TOKENS = 256;
const CHUNK_TOKENS = 1024;
/** Chunks per language; drawn with replacement, a 52k text uses about 50 of them. */
const BANK_SIZE = 64;
const BANK_SEED = hashString("generated-text-bank");

const banks = new Map<TextLang, string[]>();

function bankChunk(lang: TextLang, i: number): string {
  let bank = banks.get(lang);
  if (!bank) {
    bank = [];
    banks.set(lang, bank);
  }
  let chunk = bank[i];
  if (chunk === undefined) {
    chunk = sampleText(lang, CHUNK_TOKENS, BANK_SEED + i);
    bank[i] = chunk;
  }
  return chunk;
}

/**
 * Text of about `tokens` tokens (the simulator's tokenizer; within 1% for 100 tokens and up),
 * deterministic for (lang, tokens, seed); different seeds share no prefix.
 * @example generatedText("zh", 52_000, hashString("batch-0001")) // "用户：…"
 */
export function generatedText(lang: TextLang, tokens: number, seed: number): string {
  if (tokens <= 0) return "";
  if (tokens <= DIRECT_MAX_TOKENS) return sampleText(lang, tokens, seed);
  // Pieces are joined with "\n": every sampled text ends with sentence punctuation and starts a new
  // sentence, so each join costs exactly one token and the counts add up.
  const chunks = Math.floor((tokens - HEAD_TOKENS - CHUNK_TOKENS / 2) / (CHUNK_TOKENS + 1));
  const tail = tokens - HEAD_TOKENS - chunks * (CHUNK_TOKENS + 1) - 1;
  const random = seededRandom(seed ^ 0x5bd1e995);
  let text = sampleText(lang, HEAD_TOKENS, seed);
  for (let i = 0; i < chunks; i++) text += "\n" + bankChunk(lang, Math.floor(random() * BANK_SIZE));
  return text + "\n" + sampleText(lang, tail, seed ^ 0x27d4eb2f);
}
