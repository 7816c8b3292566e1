/** Size of the id space, as Llama 3: ids below SPECIAL_TOKEN_BASE are ordinary pieces. */
export const VOCAB_SIZE = 128_256;
export const SPECIAL_TOKEN_BASE = 128_000;

export const START_MARKER = "<|start|>";
export const END_MARKER = "<|end|>";
/** Ids chosen to match Llama 3's <|start_header_id|> and <|eot_id|>. */
export const START_TOKEN_ID = 128_006;
export const END_TOKEN_ID = 128_009;
export const SPECIAL_TOKEN_IDS: ReadonlyMap<string, number> = new Map([
  [START_MARKER, START_TOKEN_ID],
  [END_MARKER, END_TOKEN_ID],
]);

/**
 * Longest Latin word always kept as a single piece; half the words one letter longer are kept too (a
 * hash decides), as a BPE vocabulary holds some 7-letter words and not others. Tuned so English
 * prose lands near 4.4 chars/token.
 */
const MAX_WORD_LETTERS = 6;
const MAX_NEWLINE_RUN = 2;
const MAX_SPACE_RUN = 16;
/** Out of 256: chance that a mergeable CJK character merges with the next one (≈1.3 chars/token). */
const CJK_MERGE_THRESHOLD = 128;

const OTHER = 0;
const LETTER = 1;
const DIGIT = 2;
const SPACE = 3;
const NEWLINE = 4;
const PUNCT = 5;
const CJK = 6;
/** A CJK character that never merges with the next one. */
const CJK_STANDALONE = 7;

/** One byte per UTF-16 unit: the scan reads a class with one table lookup instead of range tests. */
const CHAR_CLASS: Uint8Array = buildCharClasses();

function buildCharClasses(): Uint8Array {
  const t = new Uint8Array(65536);
  const fill = (from: number, to: number, k: number) => t.fill(k, from, to + 1);
  fill(0x21, 0x7e, PUNCT);
  fill(0x30, 0x39, DIGIT);
  fill(0x41, 0x5a, LETTER);
  fill(0x61, 0x7a, LETTER);
  fill(0xc0, 0x24f, LETTER);
  t[0xd7] = OTHER;
  t[0xf7] = OTHER;
  fill(0x370, 0x52f, LETTER);
  for (const c of [0x09, 0x0b, 0x0c, 0x20, 0xa0]) t[c] = SPACE;
  t[0x0a] = NEWLINE;
  t[0x0d] = NEWLINE;
  const cjkRanges = [
    [0x3040, 0x30ff], // kana
    [0x3400, 0x4dbf],
    [0x4e00, 0x9fff],
    [0xac00, 0xd7af], // hangul
    [0xf900, 0xfaff],
  ] as const;
  for (const [from, to] of cjkRanges) {
    for (let c = from; c <= to; c++) t[c] = (mix32(c) & 3) === 0 ? CJK_STANDALONE : CJK;
  }
  return t;
}

function mix32(x: number): number {
  let h = Math.imul(x ^ 0x5bd1e995, 0x9e3779b1);
  h ^= h >>> 15;
  h = Math.imul(h, 0x85ebca6b);
  return (h ^ (h >>> 13)) >>> 0;
}

function cjkPairMerges(c: number, d: number): boolean {
  let h = Math.imul(c ^ Math.imul(d, 0x85ebca6b), 0x9e3779b1);
  h ^= h >>> 16;
  return (h & 0xff) < CJK_MERGE_THRESHOLD;
}

/** True for a CJK character the tokenizer never merges with the character after it. */
export function isStandaloneCjk(code: number): boolean {
  return CHAR_CLASS[code] === CJK_STANDALONE;
}

function specialMarkerLength(text: string, i: number): number {
  if (text.startsWith(START_MARKER, i)) return START_MARKER.length;
  if (text.startsWith(END_MARKER, i)) return END_MARKER.length;
  return 0;
}

/** A single space before `i` joins the piece at `i` when that piece is a word or punctuation mark. */
function takesLeadingSpace(text: string, i: number): boolean {
  const k = CHAR_CLASS[text.charCodeAt(i)];
  if (k === LETTER) return true;
  return k === PUNCT && specialMarkerLength(text, i) === 0;
}

/**
 * The one scan every entry point shares: returns the number of pieces and, when `ends` is given,
 * writes each piece's end offset into it (the buffer must hold text.length entries).
 */
function scan(text: string, ends: Int32Array | null): number {
  const n = text.length;
  let count = 0;
  let i = 0;
  while (i < n) {
    let k = CHAR_CLASS[text.charCodeAt(i)]!;
    if (k === SPACE) {
      let e = i + 1;
      while (e < n && CHAR_CLASS[text.charCodeAt(e)] === SPACE) e++;
      const attach = e < n && text.charCodeAt(e - 1) === 0x20 && takesLeadingSpace(text, e);
      const runEnd = attach ? e - 1 : e;
      while (i < runEnd) {
        i = Math.min(i + MAX_SPACE_RUN, runEnd);
        if (ends !== null) ends[count] = i;
        count++;
      }
      if (!attach) continue;
      // The piece that takes the space starts at runEnd; its own characters start at e.
      i = e;
      k = CHAR_CLASS[text.charCodeAt(e)]!;
    }
    let e = i + 1;
    switch (k) {
      case LETTER: {
        while (e < n && CHAR_CLASS[text.charCodeAt(e)] === LETTER) e++;
        if (e - i > MAX_WORD_LETTERS) {
          count = splitLongWord(text, i, e, ends, count);
          i = e;
          continue;
        }
        break;
      }
      case DIGIT: {
        const limit = Math.min(i + 3, n);
        while (e < limit && CHAR_CLASS[text.charCodeAt(e)] === DIGIT) e++;
        break;
      }
      case NEWLINE: {
        const limit = Math.min(i + MAX_NEWLINE_RUN, n);
        while (e < limit && CHAR_CLASS[text.charCodeAt(e)] === NEWLINE) e++;
        break;
      }
      case PUNCT: {
        if (text.charCodeAt(i) === 0x3c && e < n && text.charCodeAt(e) === 0x7c) {
          e = i + Math.max(1, specialMarkerLength(text, i));
        }
        break;
      }
      case CJK: {
        if (e < n) {
          const d = text.charCodeAt(e);
          const kd = CHAR_CLASS[d];
          if ((kd === CJK || kd === CJK_STANDALONE) && cjkPairMerges(text.charCodeAt(i), d)) e++;
        }
        break;
      }
    }
    if (ends !== null) ends[count] = e;
    count++;
    i = e;
  }
  return count;
}

/** Cuts a long word into 3–5 letter chunks; the cut points come from a hash of the word's letters. */
function splitLongWord(
  text: string,
  from: number,
  to: number,
  ends: Int32Array | null,
  count: number,
): number {
  let h = 0x811c9dc5;
  for (let j = from; j < to; j++) h = Math.imul(h ^ text.charCodeAt(j), 0x01000193);
  h = mix32(h);
  const maxWhole = MAX_WORD_LETTERS + (h >>> 31);
  let pos = from;
  while (to - pos > maxWhole) {
    h = mix32(h);
    pos += 3 + (h % 3);
    if (ends !== null) ends[count] = pos;
    count++;
  }
  if (ends !== null) ends[count] = to;
  return count + 1;
}

let scratch = new Int32Array(4096);

function pieceEnds(text: string): { ends: Int32Array; count: number } {
  if (scratch.length < text.length) scratch = new Int32Array(Math.max(text.length, scratch.length * 2));
  return { ends: scratch, count: scan(text, scratch) };
}

function pieceId(text: string, from: number, to: number): number {
  if (to - from > 2 && text.charCodeAt(from) === 0x3c) {
    const special = SPECIAL_TOKEN_IDS.get(text.slice(from, to));
    if (special !== undefined) return special;
  }
  let h = 0x811c9dc5;
  for (let j = from; j < to; j++) h = Math.imul(h ^ text.charCodeAt(j), 0x01000193);
  return (h >>> 0) % SPECIAL_TOKEN_BASE;
}

/**
 * Token ids of `text`. A Uint32Array rather than number[]: 4 bytes per id, no boxing, and a typed
 * array is what the engine's block hashing reads fastest on 250 KB prompts.
 * @example tokenize("Hello world") // Uint32Array [ <"Hello">, <" world"> ]
 */
export function tokenize(text: string): Uint32Array {
  const { ends, count } = pieceEnds(text);
  const ids = new Uint32Array(count);
  let from = 0;
  for (let t = 0; t < count; t++) {
    const to = ends[t]!;
    ids[t] = pieceId(text, from, to);
    from = to;
  }
  return ids;
}

/** Number of tokens in `text`, without allocating: the hot path for prompt accounting. */
export function countTokens(text: string): number {
  return scan(text, null);
}

/** The text of each token of `text`, in order; they concatenate back to `text`. For tests and debugging. */
export function tokenPieces(text: string): string[] {
  const { ends, count } = pieceEnds(text);
  const pieces: string[] = new Array(count);
  let from = 0;
  for (let t = 0; t < count; t++) {
    const to = ends[t]!;
    pieces[t] = text.slice(from, to);
    from = to;
  }
  return pieces;
}
