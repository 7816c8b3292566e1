// Estimates prompt tokens without a BPE: one pass over UTF-16 char codes, costing each run of letters,
// digits, whitespace, punctuation and CJK as Llama-3-style BPE tokenizers (and the simulator's) tend to.
// Accuracy and speed are pinned by token-estimate.test.ts and token-accuracy.test.ts.

const OTHER = 0;
const LETTER = 1;
const DIGIT = 2;
const SPACE = 3;
const NEWLINE = 4;
const PUNCT = 5;
const CJK = 6;

/** One byte per UTF-16 unit: a table lookup per character instead of range tests. */
const CHAR_CLASS: Uint8Array = buildCharClasses();

function buildCharClasses(): Uint8Array {
  const t = new Uint8Array(65536);
  const fill = (from: number, to: number, k: number) => t.fill(k, from, to + 1);
  fill(0x21, 0x7e, PUNCT);
  fill(0x30, 0x39, DIGIT);
  fill(0x41, 0x5a, LETTER);
  fill(0x61, 0x7a, LETTER);
  // Accented Latin, Greek and Cyrillic letters join words like ASCII ones.
  fill(0xc0, 0x24f, LETTER);
  t[0xd7] = OTHER;
  t[0xf7] = OTHER;
  fill(0x370, 0x52f, LETTER);
  for (const c of [0x09, 0x0b, 0x0c, 0x20, 0xa0]) t[c] = SPACE;
  t[0x0a] = NEWLINE;
  t[0x0d] = NEWLINE;
  fill(0x3040, 0x30ff, CJK); // kana
  fill(0x3400, 0x4dbf, CJK);
  fill(0x4e00, 0x9fff, CJK);
  fill(0xac00, 0xd7af, CJK); // hangul
  fill(0xf900, 0xfaff, CJK);
  return t;
}

/**
 * Expected tokens of a word by letter count: BPE vocabularies hold most words up to 6 letters whole,
 * about half of the 7-letter ones, and cut longer words into pieces of about 4 letters.
 */
const WORD_TOKENS = [0, 1, 1, 1, 1, 1, 1, 1.5, 2, 2, 2.17, 2.5, 2.83, 3.06, 3.22, 3.5, 3.8];
const WORD_TOKENS_PER_LETTER = 0.25;
const WORD_TOKENS_OFFSET = -0.22;
/** CJK: a character is one token unless it merges with the next (≈1.4 characters per token). */
const CJK_TOKENS_PER_CHAR = 0.7;
const CJK_TOKENS_PER_RUN = 0.27;
const DIGITS_PER_TOKEN = 3;
const SPACES_PER_TOKEN = 16;
const NEWLINES_PER_TOKEN = 2;

/**
 * Estimated token count of `text`. About 0.4 ms per 100 KB of English and 0.12 ms per 100 KB (UTF-8) of
 * Chinese on one core, so a 60K-token prompt does not hold the event loop.
 * @example estimateTextTokens("Hello world") // 2
 */
export function estimateTextTokens(text: string): number {
  const n = text.length;
  let tokens = 0;
  let i = 0;
  while (i < n) {
    let c = text.charCodeAt(i);
    // Fast path for the commonest piece, an ASCII word with or without one leading space (" hello").
    let from = i;
    if (c === 0x20 && i + 1 < n && isAsciiLetter(text.charCodeAt(i + 1))) {
      from = i + 1;
      c = text.charCodeAt(from);
    }
    let e = from + 1;
    if (isAsciiLetter(c)) {
      while (e < n) {
        const d = text.charCodeAt(e);
        if (isAsciiLetter(d) || CHAR_CLASS[d] === LETTER) e++;
        else break;
      }
      tokens += wordTokens(e - from);
      i = e;
      continue;
    }
    switch (CHAR_CLASS[c]) {
      case LETTER:
        while (e < n && CHAR_CLASS[text.charCodeAt(e)] === LETTER) e++;
        tokens += wordTokens(e - i);
        break;
      case DIGIT:
        while (e < n && CHAR_CLASS[text.charCodeAt(e)] === DIGIT) e++;
        tokens += Math.ceil((e - i) / DIGITS_PER_TOKEN);
        break;
      case SPACE: {
        while (e < n && CHAR_CLASS[text.charCodeAt(e)] === SPACE) e++;
        // A single space joins the word or punctuation mark after it (" hello" is one token).
        let len = e - i;
        if (e < n && text.charCodeAt(e - 1) === 0x20) {
          const next = CHAR_CLASS[text.charCodeAt(e)];
          if (next === LETTER || next === PUNCT) len--;
        }
        tokens += Math.ceil(len / SPACES_PER_TOKEN);
        break;
      }
      case NEWLINE:
        while (e < n && CHAR_CLASS[text.charCodeAt(e)] === NEWLINE) e++;
        tokens += Math.ceil((e - i) / NEWLINES_PER_TOKEN);
        break;
      case CJK:
        while (e < n && CHAR_CLASS[text.charCodeAt(e)] === CJK) e++;
        tokens += (e - i) * CJK_TOKENS_PER_CHAR + CJK_TOKENS_PER_RUN;
        break;
      default:
        // Punctuation, CJK punctuation, symbols, emoji halves: a token per UTF-16 unit.
        tokens += 1;
    }
    i = e;
  }
  return Math.round(tokens);
}

function isAsciiLetter(c: number): boolean {
  return ((c | 0x20) - 0x61) >>> 0 < 26;
}

function wordTokens(letters: number): number {
  return letters < WORD_TOKENS.length
    ? WORD_TOKENS[letters]!
    : letters * WORD_TOKENS_PER_LETTER + WORD_TOKENS_OFFSET;
}

/** A text part of a multi-part message; other part types (images, audio) carry no text tokens here. */
export interface ContentPart {
  readonly type: string;
  readonly text?: string;
}

/** The fields of an OpenAI chat message that become prompt tokens. */
export interface ChatMessageLike {
  readonly role: string;
  readonly content?: string | readonly ContentPart[] | null;
  readonly name?: string;
  readonly tool_calls?: readonly {
    readonly function?: { readonly name?: string; readonly arguments?: string };
  }[];
}

/** Chat template markers per message: start, newline after the role, end, newline (Llama 3 has about as many). */
const MESSAGE_OVERHEAD = 4;
/** The assistant header that opens the reply: start marker, "assistant", newline. */
const REPLY_PRIMER = 2 + estimateTextTokens("assistant");

/**
 * Estimated prompt tokens of a chat request after the engine applies its chat template.
 * @example estimateChatTokens([{ role: "user", content: "Hello world" }]) // 11
 */
export function estimateChatTokens(messages: readonly ChatMessageLike[]): number {
  let tokens = REPLY_PRIMER;
  for (const m of messages) {
    tokens += MESSAGE_OVERHEAD + estimateTextTokens(m.role);
    const content = m.content;
    if (typeof content === "string") {
      tokens += estimateTextTokens(content.trim());
    } else if (Array.isArray(content)) {
      let parts = 0;
      for (const p of content as readonly ContentPart[]) {
        if (p.type === "text" && typeof p.text === "string") {
          tokens += estimateTextTokens(p.text) + (parts > 0 ? 1 : 0);
          parts++;
        }
      }
    }
    if (m.name) tokens += 1 + estimateTextTokens(m.name);
    for (const call of m.tool_calls ?? []) {
      tokens += MESSAGE_OVERHEAD + estimateTextTokens(call.function?.name ?? "");
      tokens += estimateTextTokens(call.function?.arguments ?? "");
    }
  }
  return tokens;
}
