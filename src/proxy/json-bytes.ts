// Byte-level reading of JSON text without parsing it: skip whitespace, find a key's value, take one
// balanced object. Enough for the gateway to pick `usage` out of a body or a stream frame, whatever the
// engine's JSON spacing (compact like vLLM's, `"key": value` like Python's json.dumps, or indented).

const SPACE = 0x20;
const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const COLON = 0x3a;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN = 0x7b; // {
const CLOSE = 0x7d; // }

/** The first index at or after `i` (below `to`) that is not JSON whitespace; `to` if none. */
export function skipJsonSpace(b: Buffer, i: number, to: number): number {
  while (i < to) {
    const c = b[i];
    if (c !== SPACE && c !== LF && c !== CR && c !== TAB) return i;
    i++;
  }
  return to;
}

/**
 * Where the value of a key starts, given the index just past the key's closing quote: whitespace, a
 * colon, whitespace. -1 when no colon follows (the quoted text was a value, not a key) or nothing does.
 */
export function valueAfterKey(b: Buffer, afterKey: number, to: number): number {
  const colon = skipJsonSpace(b, afterKey, to);
  if (colon >= to || b[colon] !== COLON) return -1;
  const value = skipJsonSpace(b, colon + 1, to);
  return value < to ? value : -1;
}

/**
 * The end (exclusive) of the object that opens at `start` (a `{`), its braces balanced outside strings;
 * -1 when it is cut off before its closing brace.
 */
export function objectEnd(b: Buffer, start: number, to: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < to; i++) {
    const c = b[i];
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN) depth++;
    else if (c === CLOSE && --depth === 0) return i + 1;
  }
  return -1;
}
